"""The synchronous client, :class:`Memory`: the methods of
:class:`~graphmem.client.api_sync.MemoryAPI` over the local transport, which carries out the
core's plans (embedding, extraction and Neo4j transactions). Three lines for an agent::

    with Memory(ns="user-42") as memory:
        memory.remember("The user works at Microsoft.")
        print(memory.context("where does the user work?", budget_tokens=300).text)
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import neo4j

from graphmem import telemetry
from graphmem.client.api_sync import MemoryAPI
from graphmem.client.base import (
    ClientBase,
    refuse_close_inside_a_call,
    rows_of,
    statement_time,
    time_limited,
    timing_statements,
)
from graphmem.client.graph import Graph
from graphmem.client.keys import Keys
from graphmem.client.service_secret import service_signer
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
    reported,
)
from graphmem.embed.embedder import embedder_errors, load_model
from graphmem.errors import ConsolidationBusyError
from graphmem.ops.table import Operation
from graphmem.store import bookmarks
from graphmem.store.db import driver_errors, no_retry_on_memory

if TYPE_CHECKING:
    from graphmem.core.namespaces.export import NamespaceExport

T = TypeVar("T")
logger = logging.getLogger("graphmem")


class Memory(MemoryAPI, ClientBase):
    """Synchronous graphmem client. Connects on first use (or :meth:`connect`); close it, or
    use it as a context manager.

    Every method takes ``ns``, the namespace; it defaults to the client's ``ns``, which
    defaults to the ``GRAPHMEM_NAMESPACE`` setting (``default``).
    """

    _graph: Graph | None = None
    _closing: bool = False

    def connect(self) -> Memory:
        """Connect to Neo4j and apply (or check) the schema now rather than on first use."""
        if self._graph is None:
            # A call like the others: close() waits for a connect under way.
            with self._call(), self._thread_lock:
                if self._graph is None:
                    self._graph = self._open_graph()
            self._start_background()
        return self

    _background: tuple[threading.Event, threading.Thread] | None = None

    def _start_background(self) -> None:
        """With ``consolidate_every``, a daemon thread that tries a consolidation run every
        so many seconds (the gate decides whether one starts) until :meth:`close`."""
        with self._thread_lock:
            if self.consolidate_every is None or self._background is not None:
                return
            stop = threading.Event()
            every = self.consolidate_every

            def loop() -> None:
                while not stop.wait(every):
                    try:
                        self.consolidate()
                    except ConsolidationBusyError:
                        pass  # another run holds the namespace: try again next time
                    except Exception as exc:  # logged; the next attempt may succeed
                        logger.warning("background consolidation failed: %s", exc)

            thread = threading.Thread(target=loop, daemon=True, name="graphmem-consolidate")
            self._background = (stop, thread)
            thread.start()

    def _stop_background(self) -> None:
        background, self._background = self._background, None
        if background is not None:
            stop, thread = background
            stop.set()
            if thread is not threading.current_thread():
                thread.join()

    @property
    def graph(self) -> Graph:
        """The open graph (connecting if needed): its schema report, and named queries such
        as the analyst library in ``cypher/`` through :meth:`Graph.execute`."""
        graph = self.connect()._graph
        assert graph is not None
        return graph

    def close(self) -> None:
        """Close the connections once the calls in flight have finished; calls made meanwhile
        wait, and a call made afterwards connects again."""
        with self._state:
            refuse_close_inside_a_call(self._callers, threading.get_ident())
        self._stop_background()  # lets a background run under way finish first
        with self._state:
            self._closing = True
            try:
                self._state.wait_for(lambda: not self._callers)
            except BaseException:  # interrupted while waiting: calls go on, on the open graph
                self._closing = False
                self._state.notify_all()
                raise
            graph, self._graph = self._graph, None
        try:
            self._close_llm()
            if graph is not None:
                graph.close()
        finally:
            with self._state:
                self._closing = False
                self._state.notify_all()

    def __enter__(self) -> Memory:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- driving plans ----------------------------------------------------------------------------
    @contextmanager
    def _call(self) -> Iterator[None]:
        """A call in flight: it waits for a close() under way, and close() waits for it."""
        caller = threading.get_ident()
        with self._state:
            if not self._callers[caller]:  # a call from inside one of this thread's goes on
                self._state.wait_for(lambda: not self._closing)
            self._callers[caller] += 1
        try:
            yield
        finally:
            with self._state:
                self._callers -= collections.Counter({caller: 1})
                self._state.notify_all()

    def _run(self, plan: Plan[T]) -> T:
        with self._call():
            return self._drive(plan)

    def _drive(self, plan: Plan[T]) -> T:
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
                value = self._step(step)
            except BaseException as exc:  # an interrupt too: a run records why it stopped
                error, value = exc, None

    def _step(self, step: Any) -> Any:
        """Carries out one step of a plan and returns its answer."""
        if isinstance(step, LoadModel):
            load_model(self.embedder)
            return None
        elif isinstance(step, Embed):
            with (
                embedder_errors(self.embedder),
                telemetry.timed("embed", "embed", texts=len(step.texts)),
            ):
                return self.embedder.embed(step.texts)
        elif isinstance(step, Progress):
            reported(step.report(step.count))
            return None
        elif isinstance(step, Extract):
            return self._extract(step)
        elif isinstance(step, Propose):
            return self._propose(step)
        else:
            return self._transaction(step)

    def _transaction(self, step: Transaction[T]) -> T:
        graph = self.graph

        def body(tx: neo4j.ManagedTransaction) -> T:
            work = step.work()
            rows: Rows | None = None
            while True:
                try:
                    run: Run = work.send(rows)  # type: ignore[arg-type]
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                run.query.check_params(run.params)
                timed, started = timing_statements(), time.perf_counter()
                with no_retry_on_memory(), telemetry.span(run.query.name, **{"db.system": "neo4j"}):
                    result = tx.run(run.query.text, run.params)
                    rows = rows_of(result, run.plain_rows)
                    if timed is not None:
                        timed.append(
                            statement_time(run.query.name, started, result.consume(), len(rows))
                        )

        timeout = self.settings.neo4j_transaction_timeout
        body = time_limited(body, timeout)
        # One bookmark chain per client (the driver's, which graphmem's other queries use too):
        # on a cluster each transaction sees the writes of the ones before it.
        with (
            driver_errors(timeout),
            graph.driver.session(
                database=graph.database,
                bookmark_manager=bookmarks.manager(graph.driver.execute_query_bookmark_manager),
            ) as session,
        ):
            timed, started = timing_statements(), time.perf_counter()
            try:
                with telemetry.timed("db", f"transaction:{step.mode}"):
                    if step.mode == "read":
                        return session.execute_read(body)
                    return session.execute_write(body)
            finally:
                if timed is not None:
                    timed.append(statement_time(f"transaction:{step.mode}", started, None, 0))

    # --- the local transport ----------------------------------------------------------------
    def _send(self, op: Operation, args: dict[str, Any]) -> Any:
        """Carries out ``op`` here: the core's plan of it, run by this client (an export: its
        pages, as the caller reads them)."""
        if op.call == "export":
            return self._records(self._core.export(**args))
        return self._run(self._plan(op, args))

    def _records(self, export: NamespaceExport) -> Iterator[dict[str, Any]]:
        while (plan := export.next_page()) is not None:
            yield from self._run(plan)

    @property
    def keys(self) -> Keys:
        """The API keys of ``graphmem serve``: create, list, revoke, check, resign."""
        return Keys(self._core, self._run, lambda: service_signer(self.settings))

    def match_ids(self, prefixes: Iterable[str], *, ns: str | None = None) -> dict[str, list[str]]:
        """Up to three full ids (facts, episodes, forgotten ones) for each id prefix."""
        return self._run(self._core.match_ids(prefixes, ns=ns))


__all__ = ["Memory"]
