"""Running named queries: reads routed as reads, and driver errors mapped in one place."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import neo4j
from neo4j.exceptions import (
    AuthError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from graphmem.cypher import CypherQuery
from graphmem.errors import DatabaseError, GraphmemError, Neo4jUnavailableError


def map_driver_error(exc: Neo4jError | DriverError) -> GraphmemError:
    """The graphmem error for a Neo4j driver error."""
    if isinstance(exc, AuthError):
        return Neo4jUnavailableError(f"Neo4j refused the credentials: {exc}")
    if isinstance(exc, ServiceUnavailable | SessionExpired):
        return Neo4jUnavailableError(f"Neo4j became unavailable: {exc}")
    if isinstance(exc, Neo4jError):
        return DatabaseError(f"{exc.code}: {exc.message}")
    return DatabaseError(str(exc))


@contextmanager
def driver_errors() -> Iterator[None]:
    """Map driver errors raised in the block to graphmem's error tree."""
    try:
        yield
    except (Neo4jError, DriverError) as exc:
        raise map_driver_error(exc) from exc


def execute(
    driver: neo4j.Driver, database: str, query: CypherQuery, /, **params: Any
) -> list[neo4j.Record]:
    """Run one named query in its own transaction, routed by the query's mode."""
    query.check_params(params)
    routing = neo4j.RoutingControl.READ if query.mode == "read" else neo4j.RoutingControl.WRITE
    with driver_errors():
        records, _, _ = driver.execute_query(
            query.text, params, database_=database, routing_=routing
        )
    return list(records)
