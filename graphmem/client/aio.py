"""The asynchronous client, :class:`AsyncMemory`: the methods of
:class:`~graphmem.client.api_aio.AsyncMemoryAPI` over the local transport, which carries out
the core's plans with the async Neo4j driver (embedding and extraction in worker threads)."""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import neo4j

from graphmem import telemetry
from graphmem.client.api_aio import AsyncMemoryAPI
from graphmem.client.base import (
    ClientBase,
    checked_proposal,
    proposer_method,
    refuse_close_inside_a_call,
    statement_time,
    time_limited,
    timing_statements,
)
from graphmem.client.graph import AsyncGraph
from graphmem.client.keys import AsyncKeys
from graphmem.client.service_secret import service_signer
from graphmem.core.extraction import ExtractedFact, extracted_facts, extractor_errors
from graphmem.core.plans import (
    Embed,
    Extract,
    LoadModel,
    Plan,
    Progress,
    Propose,
    Rows,
    Run,
    Transaction,
    Work,
)
from graphmem.embed.embedder import embedder_errors, load_model
from graphmem.errors import ClientUsageError, ConsolidationBusyError
from graphmem.models.consolidation import Proposal
from graphmem.ops.table import Operation
from graphmem.store import bookmarks
from graphmem.store.db import driver_errors, no_retry_on_memory

if TYPE_CHECKING:
    from graphmem.core.namespaces.export import NamespaceExport

T = TypeVar("T")
logger = logging.getLogger("graphmem")


class AsyncMemory(AsyncMemoryAPI, ClientBase):
    """Asynchronous graphmem client with the same methods as :class:`~graphmem.client.Memory`,
    awaited. Embedding and extraction run in a worker thread so the event loop stays free.
    """

    _graph: AsyncGraph | None = None
    _connecting: asyncio.Lock | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _idle: asyncio.Event | None = None
    _open_again: asyncio.Event | None = None
    _closing: bool = False

    async def connect(self) -> AsyncMemory:
        self._bind_loop()
        if self._graph is None:
            # A call like the others: close() waits for a connect under way.
            async with self._call():
                assert self._connecting is not None
                async with self._connecting:  # calls that race here share one connection
                    if self._graph is None:
                        self._graph = await self._open_async_graph()
            self._start_background()
        return self

    _background: tuple[asyncio.Event, asyncio.Task[None]] | None = None

    def _start_background(self) -> None:
        """With ``consolidate_every``, a task on this event loop that tries a consolidation
        run every so many seconds (the gate decides whether one starts) until :meth:`close`."""
        if self.consolidate_every is None or self._background is not None:
            return
        stop, every = asyncio.Event(), self.consolidate_every

        async def loop() -> None:
            while True:
                try:
                    await asyncio.wait_for(stop.wait(), every)
                    return
                except TimeoutError:
                    pass
                try:
                    await self.consolidate()
                except ConsolidationBusyError:
                    pass  # another run holds the namespace: try again next time
                except Exception as exc:  # logged; the next attempt may succeed
                    logger.warning("background consolidation failed: %s", exc)

        self._background = (stop, asyncio.get_running_loop().create_task(loop()))

    async def _stop_background(self) -> None:
        background, self._background = self._background, None
        if background is not None and background[1] is not asyncio.current_task():
            stop, task = background
            stop.set()
            if not task.get_loop().is_closed():
                await task

    def _bind_loop(self) -> None:
        """Tie the client to the running event loop, or refuse a second loop while connected."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._graph is not None:
                raise ClientUsageError(
                    "this AsyncMemory connected in another event loop, and its connections "
                    "belong to that loop: use one AsyncMemory per event loop (per "
                    "asyncio.run), or close it in its loop before using it in another"
                )
            # The lock and events, like the driver, belong to the loop they are used in.
            self._loop, self._connecting = loop, asyncio.Lock()
            self._idle, self._open_again = asyncio.Event(), asyncio.Event()
            self._open_again.set()

    @property
    def graph(self) -> AsyncGraph:
        """The open graph (after :meth:`connect`): its schema report, and named queries such
        as the analyst library in ``cypher/`` through :meth:`AsyncGraph.execute`."""
        if self._graph is None:
            raise ClientUsageError(
                "this AsyncMemory is not connected: await memory.connect() (or use it in "
                "`async with`) before reading memory.graph"
            )
        return self._graph

    async def close(self) -> None:
        """Close the connections once the calls in flight have finished; calls made meanwhile
        wait, and a call made afterwards connects again."""
        refuse_close_inside_a_call(self._callers, asyncio.current_task())
        if self._loop is asyncio.get_running_loop():
            await self._stop_background()  # lets a background run under way finish first
        idle, open_again = self._idle, self._open_again
        if idle is not None and open_again is not None and self._loop is asyncio.get_running_loop():
            self._closing = True
            open_again.clear()
            try:
                while self._callers:
                    idle.clear()
                    await idle.wait()
                await self._close_driver()
            finally:
                self._closing = False
                open_again.set()
        else:
            await self._close_driver()
        if not self._callers:
            await asyncio.to_thread(self._close_llm)
        if self._graph is None and not self._callers:
            self._loop = None  # free to connect in another event loop

    async def _close_driver(self) -> None:
        graph, self._graph = self._graph, None
        # Connections of an event loop that has been closed cannot be closed from another
        # loop (the driver raises RuntimeError); they ended with their loop, so are dropped.
        if graph is not None and not (self._loop is not None and self._loop.is_closed()):
            await graph.close()

    async def __aenter__(self) -> AsyncMemory:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def _call(self) -> AsyncIterator[None]:
        """A call in flight: it waits for a close() under way, and close() waits for it."""
        self._bind_loop()  # refuses another loop's client before waiting on its events
        caller = asyncio.current_task()
        while self._closing and self._open_again is not None and not self._callers[caller]:
            await self._open_again.wait()
        self._bind_loop()  # a close() waited for may have freed the client from this loop
        self._callers[caller] += 1
        try:
            yield
        finally:
            self._callers -= collections.Counter({caller: 1})
            if not self._callers and self._idle is not None:
                self._idle.set()

    async def _run(self, plan: Plan[T]) -> T:
        async with self._call():
            return await self._drive(plan)

    async def _drive(self, plan: Plan[T]) -> T:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                # A step's failure is thrown into the plan, so that a plan that must record
                # it (a consolidation run) can; the others let it through unchanged.
                step = plan.send(value) if error is None else plan.throw(error)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            error = None
            try:
                value = await self._step(step)
            except BaseException as exc:  # an interrupt too: a run records why it stopped
                error, value = exc, None

    async def _step(self, step: Any) -> Any:
        """Carries out one step of a plan and returns its answer."""
        if isinstance(step, LoadModel):
            await asyncio.to_thread(load_model, self.embedder)
            return None
        elif isinstance(step, Embed):
            with (
                embedder_errors(self.embedder),
                telemetry.timed("embed", "embed", texts=len(step.texts)),
            ):
                return await asyncio.to_thread(self.embedder.embed, step.texts)
        elif isinstance(step, Progress):
            result = step.report(step.count)  # on the event loop: a quick update
            return (await result) if inspect.isawaitable(result) else None
        elif isinstance(step, Extract):
            return await self._extract_async(step)
        elif isinstance(step, Propose):
            return await self._propose_async(step)
        else:
            return await self._transaction(step)

    async def _extract_async(self, step: Extract) -> list[ExtractedFact]:
        """Runs ``extract`` in a worker thread, and awaits what it returns if that is awaitable
        (an ``async def extract``, or any callable that returns a coroutine)."""
        extractor = self._extractor(step.extractor)
        with extractor_errors(extractor):
            result = await asyncio.to_thread(extractor.extract, step.episodes)
            if inspect.isawaitable(result):
                result = await result
            return extracted_facts(result)

    async def _propose_async(self, step: Propose) -> Proposal:
        """Runs ``propose`` in a worker thread, and awaits what it returns if awaitable."""
        proposer = self.proposer
        result = await asyncio.to_thread(proposer_method(proposer, step), step.cluster)
        if inspect.isawaitable(result):
            result = await result
        return checked_proposal(result, proposer)

    async def _transaction(self, step: Transaction[T]) -> T:
        graph = (await self.connect())._graph
        assert graph is not None

        async def body(tx: neo4j.AsyncManagedTransaction) -> T:
            work: Work[T] = step.work()
            rows: Rows | None = None
            while True:
                try:
                    run: Run = work.send(rows)  # type: ignore[arg-type]
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                run.query.check_params(run.params)
                timed, started = timing_statements(), time.perf_counter()
                with no_retry_on_memory(), telemetry.span(run.query.name, **{"db.system": "neo4j"}):
                    result = await tx.run(run.query.text, run.params)
                    rows = (
                        [dict(record) async for record in result]
                        if run.plain_rows
                        else await result.data()
                    )
                    if timed is not None:
                        summary = await result.consume()
                        timed.append(statement_time(run.query.name, started, summary, len(rows)))

        timeout = self.settings.neo4j_transaction_timeout
        body = time_limited(body, timeout)
        with driver_errors(timeout):
            async with graph.driver.session(
                database=graph.database, bookmark_manager=bookmarks.manager(graph.bookmarks)
            ) as session:
                timed, started = timing_statements(), time.perf_counter()
                try:
                    with telemetry.timed("db", f"transaction:{step.mode}"):
                        if step.mode == "read":
                            return await session.execute_read(body)
                        return await session.execute_write(body)
                finally:
                    if timed is not None:
                        timed.append(statement_time(f"transaction:{step.mode}", started, None, 0))

    # --- the local transport ----------------------------------------------------------------
    async def _send(self, op: Operation, args: dict[str, Any]) -> Any:
        """Carries out ``op`` here: the core's plan of it, run by this client (an export: its
        pages, as the caller reads them)."""
        if op.call == "export":
            return self._records(self._core.export(**args))
        if self._blocks(op):  # a tokenizer or an LLM to load: not on the event loop
            plan = await asyncio.to_thread(self._plan, op, args)
        else:
            plan = self._plan(op, args)
        result = await self._run(plan)
        telemetry.done(op.name, op.writes, result)
        return result

    async def _records(self, export: NamespaceExport) -> AsyncIterator[dict[str, Any]]:
        while (plan := export.next_page()) is not None:
            for record in await self._run(plan):
                yield record

    @property
    def keys(self) -> AsyncKeys:
        """The API keys of ``graphmem serve``: create, list, revoke, check, resign."""
        return AsyncKeys(self._core, self._run, lambda: service_signer(self.settings))

    async def match_ids(
        self, prefixes: Iterable[str], *, ns: str | None = None
    ) -> dict[str, list[str]]:
        """See :meth:`~graphmem.client.Memory.match_ids`."""
        return await self._run(self._core.match_ids(prefixes, ns=ns))


__all__ = ["AsyncMemory"]
