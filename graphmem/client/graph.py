"""An open graph: a verified driver to the configured Neo4j with graphmem's schema in place."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import neo4j

from graphmem.errors import DatabaseError, GraphmemError, InvalidInputError
from graphmem.servers.connection import Neo4jTarget, open_driver
from graphmem.servers.targets import resolve_target
from graphmem.settings import GraphmemSettings
from graphmem.store import db, schema
from graphmem.store.cypher import CypherQuery
from graphmem.store.schema import EmbedderInfo, SchemaReport


@dataclass
class Graph:
    """A driver, the database it uses, and the schema it was checked against."""

    driver: neo4j.Driver
    target: Neo4jTarget
    schema: SchemaReport

    @property
    def database(self) -> str:
        return self.target.database

    @classmethod
    def open(
        cls,
        settings: GraphmemSettings,
        embedder: EmbedderInfo,
        *,
        apply_schema: bool = True,
        target: Neo4jTarget | None = None,
    ) -> Graph:
        """Connect, then apply (or, with ``apply_schema=False``, only check) the schema.

        Raises :class:`~graphmem.errors.EmbedderMismatchError` when the graph was built with
        another embedder, before anything is written.
        """
        target = target or resolve_target(settings)
        driver = open_driver(target, connection_timeout=settings.neo4j_connection_timeout)
        try:
            if apply_schema:
                report = schema.apply_schema(
                    driver,
                    database=target.database,
                    embedder=embedder,
                    timeout=settings.schema_wait_timeout,
                )
            else:
                report = schema.check_schema(driver, database=target.database, embedder=embedder)
        except BaseException:
            driver.close()
            raise
        return cls(driver=driver, target=target, schema=report)

    def execute(self, query: CypherQuery, /, **params: Any) -> list[neo4j.Record]:
        """Run a named query (such as one of the analyst library) with ``params``.

        Parameters the query does not declare, or lacks, or of a type the driver cannot send,
        and statements Neo4j refuses (a time without a zone for the analyst queries, a string
        where a number is needed, a syntax error in a query of your own) are an
        :class:`~graphmem.errors.InvalidInputError`.
        """
        try:
            return db.execute(self.driver, self.database, query, **params)
        except (TypeError, ValueError, OverflowError) as exc:
            if isinstance(exc, GraphmemError) or not _raised_packing(exc):
                raise
            raise InvalidInputError(
                f"query {query.name!r}: a parameter cannot be sent to Neo4j: {exc}"
            ) from exc
        except DatabaseError as exc:
            cause = exc.__cause__
            if isinstance(cause, neo4j.exceptions.ClientError) and (cause.code or "").startswith(
                "Neo.ClientError.Statement."
            ):
                raise InvalidInputError(
                    f"Neo4j refused query {query.name!r} with these parameters: {cause.message}"
                ) from cause
            raise

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Graph:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _raised_packing(exc: BaseException) -> bool:
    """Whether the driver raised ``exc`` while encoding parameters (a value of a type Bolt
    cannot carry, such as a ``Decimal``, an integer over 64 bits or a map with a key that is
    not a string)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return any({"neo4j", "_codec"} <= set(Path(frame.filename).parts) for frame in frames)
