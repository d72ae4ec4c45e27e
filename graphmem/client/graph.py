"""An open graph: a verified driver to the configured Neo4j with graphmem's schema in place
(:class:`Graph` for the sync client, :class:`AsyncGraph` for the async one)."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j

from graphmem.errors import GraphmemError, InvalidInputError, ResultTooLargeError
from graphmem.servers.connection import Neo4jTarget, open_async_driver, open_driver
from graphmem.servers.targets import resolve_target
from graphmem.settings import GraphmemSettings
from graphmem.store import bookmarks, schema
from graphmem.store.cypher import CypherQuery
from graphmem.store.guard import GuardedRows, guarded_read, guarded_read_async
from graphmem.store.indexes import EmbedderInfo
from graphmem.store.schema import SchemaReport


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
        driver = open_driver(
            target,
            connection_timeout=settings.neo4j_connection_timeout,
            options=driver_options(settings),
        )
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
        read = _Read.of(query, params, timeout, limit, self)
        with read.packing_errors():
            return guarded_read(
                self.driver,
                self.database,
                read.text,
                read.params,
                timeout=read.timeout,
                limit=read.limit,
                bookmark_manager=bookmarks.manager(self.driver.execute_query_bookmark_manager),
            )

    def execute(self, query: CypherQuery | str, /, **params: Any) -> list[neo4j.Record]:
        """Run a named query (such as one of the analyst library) or a query of your own with
        ``params`` on the guarded read path (see :meth:`read`), and return all its records.

        More records than the row limit (``GRAPHMEM_READ_ROW_LIMIT``) are a
        :class:`~graphmem.errors.ResultTooLargeError`, not a silently shortened list: add a
        ``LIMIT``, or call :meth:`read` with a ``limit`` of your own.
        """
        return _all_records(self.read(query, params))

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Graph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class AsyncGraph:
    """The async client's open graph: an async driver to the configured Neo4j, opened once
    the schema has been applied (or checked) exactly as :meth:`Graph.open` does it, and the
    bookmark chain that continues the schema work, so that every transaction of the client
    sees it (on a cluster too). :meth:`read` and :meth:`execute` are :class:`Graph`'s."""

    driver: neo4j.AsyncDriver
    target: Neo4jTarget
    schema: SchemaReport
    bookmarks: neo4j.api.AsyncBookmarkManager
    read_timeout: float = 30.0
    read_row_limit: int = 10_000

    @property
    def database(self) -> str:
        return self.target.database

    @classmethod
    async def open(
        cls,
        settings: GraphmemSettings,
        embedder: EmbedderInfo,
        *,
        apply_schema: bool = True,
        target: Neo4jTarget | None = None,
    ) -> AsyncGraph:
        """:meth:`Graph.open`, then the async driver. The schema work runs on a sync driver
        in a worker thread, which closes it also when the call that connects is cancelled
        meanwhile and no one waits for it."""

        def schema_work() -> tuple[Neo4jTarget, SchemaReport, list[str]]:
            with Graph.open(settings, embedder, apply_schema=apply_schema, target=target) as g:
                marks = g.driver.execute_query_bookmark_manager.get_bookmarks()
                return g.target, g.schema, list(marks)

        opened, report, marks = await asyncio.to_thread(schema_work)
        bookmarks = neo4j.AsyncGraphDatabase.bookmark_manager(
            initial_bookmarks=neo4j.Bookmarks.from_raw_values(*marks)
        )
        driver = await open_async_driver(
            opened,
            connection_timeout=settings.neo4j_connection_timeout,
            options=driver_options(settings),
        )
        return cls(
            driver=driver,
            target=opened,
            schema=report,
            bookmarks=bookmarks,
            read_timeout=settings.read_timeout,
            read_row_limit=settings.read_row_limit,
        )

    async def read(
        self,
        query: str | CypherQuery,
        /,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        limit: int | None = None,
    ) -> GuardedRows:
        """:meth:`Graph.read` on the async driver."""
        read = _Read.of(query, params, timeout, limit, self)
        with read.packing_errors():
            return await guarded_read_async(
                self.driver,
                self.database,
                read.text,
                read.params,
                timeout=read.timeout,
                limit=read.limit,
                bookmark_manager=bookmarks.manager(self.bookmarks),
            )

    async def execute(self, query: CypherQuery | str, /, **params: Any) -> list[neo4j.Record]:
        """:meth:`Graph.execute` on the async driver."""
        return _all_records(await self.read(query, params))

    async def close(self) -> None:
        await self.driver.close()


@dataclass(frozen=True)
class _Read:
    """A guarded read's arguments, checked: the query's name (for errors) and text, its
    parameters, and the time and row limits (the graph's unless given)."""

    name: str
    text: str
    params: dict[str, Any]
    timeout: float
    limit: int

    @classmethod
    def of(
        cls,
        query: str | CypherQuery,
        params: Mapping[str, Any] | None,
        timeout: float | None,
        limit: int | None,
        graph: Graph | AsyncGraph,
    ) -> _Read:
        given = dict(params or {})
        if isinstance(query, CypherQuery):
            query.check_params(given)
            name, text = repr(query.name), query.text
        else:
            name, text = "the query", query
        timeout = graph.read_timeout if timeout is None else timeout
        limit = graph.read_row_limit if limit is None else limit
        if not timeout > 0 or isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError(
                f"a read needs a positive timeout and row limit, got {timeout!r} and {limit!r}"
            )
        return cls(name, text, given, timeout, limit)

    @contextmanager
    def packing_errors(self) -> Iterator[None]:
        """A parameter the driver cannot send, as the caller's input error."""
        try:
            yield
        except (TypeError, ValueError, OverflowError) as exc:
            if isinstance(exc, GraphmemError) or not _raised_packing(exc):
                raise
            raise InvalidInputError(
                f"{self.name}: a parameter cannot be sent to Neo4j: {exc}"
            ) from exc


def _all_records(rows: GuardedRows) -> list[neo4j.Record]:
    """Every record, or a :class:`ResultTooLargeError` when the row limit cut them."""
    if rows.truncated:
        raise ResultTooLargeError(
            f"the query returned more than {rows.limit} rows (GRAPHMEM_READ_ROW_LIMIT): add "
            "a LIMIT, or use Graph.read(..., limit=N), which keeps the first N",
            limit=rows.limit,
        )
    return rows.records


def _raised_packing(exc: BaseException) -> bool:
    """Whether the driver raised ``exc`` while encoding parameters (a value of a type Bolt
    cannot carry, such as a ``Decimal``, an integer over 64 bits or a map with a key that is
    not a string)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return any({"neo4j", "_codec"} <= set(Path(frame.filename).parts) for frame in frames)


def driver_options(settings: GraphmemSettings) -> dict[str, Any]:
    """The driver settings that graphmem's settings name (none: the driver's defaults)."""
    if settings.neo4j_max_retry_time is None:
        return {}
    return {"max_transaction_retry_time": settings.neo4j_max_retry_time}
