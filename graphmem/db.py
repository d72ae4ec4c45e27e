"""Running named queries: reads routed as reads, and driver errors mapped in one place."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import neo4j
from neo4j.exceptions import (
    AuthError,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graphmem.cypher import CypherQuery
from graphmem.errors import (
    CommitUnknownError,
    DatabaseError,
    GraphmemError,
    Neo4jUnavailableError,
    TransientDatabaseError,
)


def map_driver_error(exc: Neo4jError | DriverError) -> GraphmemError:
    """The graphmem error for a Neo4j driver error."""
    if isinstance(exc, AuthError):
        return Neo4jUnavailableError(f"Neo4j refused the credentials: {exc}")
    if isinstance(exc, IncompleteCommit):
        return CommitUnknownError(
            f"the connection to Neo4j was lost while the write was committing, so it may or may "
            f"not have been applied; check before writing it again ({exc})"
        )
    if isinstance(exc, ServiceUnavailable | SessionExpired):
        return Neo4jUnavailableError(f"Neo4j became unavailable: {exc}")
    if isinstance(exc, TransientError):
        return TransientDatabaseError(
            f"{exc.code}: {exc.message} (a transient failure that outlasted the retries; "
            "nothing was written, and the call may be tried again)"
        )
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
