"""An open graph: a verified driver to the configured Neo4j with graphmem's schema in place."""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import neo4j

from graphmem.errors import GraphmemError, InvalidInputError, ResultTooLargeError
from graphmem.servers.connection import Neo4jTarget, open_driver
from graphmem.servers.targets import resolve_target
from graphmem.settings import GraphmemSettings
from graphmem.store import schema
from graphmem.store.cypher import CypherQuery
from graphmem.store.guard import GuardedRows, guarded_read
from graphmem.store.schema import EmbedderInfo, SchemaReport


@dataclass
class Graph:
    """A driver, the database it uses, and the schema it was checked against."""

    driver: neo4j.Driver
    target: Neo4jTarget
    schema: SchemaReport
    #: Time limit (seconds) and row limit of :meth:`read` and :meth:`execute`
    #: (``GRAPHMEM_READ_TIMEOUT``, ``GRAPHMEM_READ_ROW_LIMIT``).
    read_timeout: float = 30.0
    read_row_limit: int = 10_000

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
        return cls(
            driver=driver,
            target=target,
            schema=report,
            read_timeout=settings.read_timeout,
            read_row_limit=settings.read_row_limit,
        )

    def read(
        self,
        query: str | CypherQuery,
        /,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        limit: int | None = None,
    ) -> GuardedRows:
        """Run a read-only query of your own (text) or of the analyst library on the guarded
        read path: planned first, refused unless the plan only reads (see
        :mod:`graphmem.store.guard`), then run in a read transaction of at most ``timeout``
        seconds, keeping at most ``limit`` rows (``truncated`` says whether there were more).

        A refused query is a :class:`~graphmem.errors.QueryRefusedError` naming what was
        refused; parameters a library query does not declare or lacks, values the driver
        cannot send and statements Neo4j rejects are an
        :class:`~graphmem.errors.InvalidInputError`.
        """
        params = dict(params or {})
        if isinstance(query, CypherQuery):
            query.check_params(params)
            name, text = repr(query.name), query.text
        else:
            name, text = "the query", query
        timeout = self.read_timeout if timeout is None else timeout
        limit = self.read_row_limit if limit is None else limit
        if not timeout > 0 or isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError(
                f"a read needs a positive timeout and row limit, got {timeout!r} and {limit!r}"
            )
        try:
            return guarded_read(
                self.driver, self.database, text, params, timeout=timeout, limit=limit
            )
        except (TypeError, ValueError, OverflowError) as exc:
            if isinstance(exc, GraphmemError) or not _raised_packing(exc):
                raise
            raise InvalidInputError(f"{name}: a parameter cannot be sent to Neo4j: {exc}") from exc

    def execute(self, query: CypherQuery | str, /, **params: Any) -> list[neo4j.Record]:
        """Run a named query (such as one of the analyst library) or a query of your own with
        ``params`` on the guarded read path (see :meth:`read`), and return all its records.

        More records than the row limit (``GRAPHMEM_READ_ROW_LIMIT``) are a
        :class:`~graphmem.errors.ResultTooLargeError`, not a silently shortened list: add a
        ``LIMIT``, or call :meth:`read` with a ``limit`` of your own.
        """
        rows = self.read(query, params)
        if rows.truncated:
            raise ResultTooLargeError(
                f"the query returned more than {rows.limit} rows (GRAPHMEM_READ_ROW_LIMIT): add "
                "a LIMIT, or use Graph.read(..., limit=N), which keeps the first N",
                limit=rows.limit,
            )
        return rows.records

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
