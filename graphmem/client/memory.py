"""The Python clients: :class:`Memory` (sync) and :class:`AsyncMemory` (async).

Both have the same methods with the same arguments and results; all logic lives in
:mod:`graphmem.core.memory_core`, and each client only carries out the plans it returns (embedding,
extraction and Neo4j transactions). Three lines for an agent::

    with Memory(ns="user-42") as memory:
        memory.remember("The user works at Microsoft.")
        print(memory.context("where does the user work?", budget_tokens=300).text)
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import neo4j

from graphmem.client.graph import Graph
from graphmem.core.checks import resolve_config
from graphmem.core.extraction import ExtractedFact, Extractor, extracted_facts, extractor_errors
from graphmem.core.memory_core import MemoryCore
from graphmem.core.plans import (
    Embed,
    Extract,
    LoadModel,
    Plan,
    Progress,
    Rows,
    Run,
    Transaction,
    Work,
    reported,
)
from graphmem.core.recall.ranking import RecallConfig
from graphmem.embed.embedder import Embedder, embedder_errors, load_model
from graphmem.embed.tokens import TokenCounter, counter_from_setting
from graphmem.errors import ClientUsageError, GraphmemError
from graphmem.models import (
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    FactInput,
    IngestResult,
    Kind,
    Message,
    NamespaceStats,
    RecallResult,
)
from graphmem.servers.connection import Neo4jTarget, open_async_driver
from graphmem.settings import GraphmemSettings, load_settings
from graphmem.store.db import driver_errors

if TYPE_CHECKING:
    import numpy.typing as npt

T = TypeVar("T")


B = TypeVar("B", bound=Callable[..., Any])


def _time_limited(body: B, timeout: float | None) -> B:
    """``body``, a transaction function, with Neo4j's time limit set when there is one."""
    return body if timeout is None else neo4j.unit_of_work(timeout=timeout)(body)


def settings_recall_config(settings: GraphmemSettings) -> RecallConfig:
    """The recall configuration the settings give a Memory that is not handed one."""
    return RecallConfig(
        fusion=settings.recall_fusion,
        min_score=settings.recall_min_score,
        recency_weight=settings.recall_recency_weight,
        recency_half_life_days=settings.recall_recency_half_life_days,
    )


def _check_options(
    settings: object, embedder: object, extractor: object, config: object, counter: object
) -> None:
    """Refuse constructor arguments of the wrong kind at once, not at first use."""

    def wrong(name: str, expected: str, value: object, hint: str = "") -> ClientUsageError:
        got = type(value).__name__
        return ClientUsageError(f"{name} must be {expected}, got {got}{hint}")

    if settings is not None and not isinstance(settings, GraphmemSettings):
        hint = " (the namespace is the keyword argument ns=)" if isinstance(settings, str) else ""
        raise wrong("settings", "a GraphmemSettings", settings, hint)
    for name, value, methods in (
        ("embedder", embedder, ("embed",)),
        ("extractor", extractor, ("extract",)),
        ("token_counter", counter, ("count",)),
    ):
        if value is not None and not all(callable(getattr(value, m, None)) for m in methods):
            raise wrong(name, f"an object with {', '.join(methods)}()", value)
    if embedder is not None:
        dimension = getattr(embedder, "dimension", None)
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise wrong("embedder", "an object with a positive int dimension", embedder)
    if config is not None and not isinstance(config, RecallConfig | Mapping):
        raise wrong("recall_config", "a RecallConfig or a mapping", config)


class _ClientBase:
    """Settings, embedder, extractor, token counter and the shared core."""

    def __init__(
        self,
        settings: GraphmemSettings | None = None,
        *,
        ns: str | None = None,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        recall_config: RecallConfig | Mapping[str, Any] | None = None,
        token_counter: TokenCounter | None = None,
        target: Neo4jTarget | None = None,
        apply_schema: bool = True,
    ) -> None:
        _check_options(settings, embedder, extractor, recall_config, token_counter)
        self.settings = settings or load_settings()
        if embedder is None:
            from graphmem.embed.embedder import SentenceTransformerEmbedder

            embedder = SentenceTransformerEmbedder.from_settings(self.settings, lazy=True)
        self.embedder = embedder
        self.extractor = extractor
        self._counter = token_counter
        self._target = target
        self._apply_schema = apply_schema
        # Makes a Memory's first connect happen once when threads race (AsyncMemory, on one
        # event loop, uses an asyncio lock instead).
        self._thread_lock = threading.Lock()
        # Guards a Memory's calls in flight (below), so that close() can wait for them.
        self._state = threading.Condition()
        # The calls in flight by thread (Memory) or task (AsyncMemory): close() waits until
        # there are none; close() from inside one of them (a progress callback) would wait
        # for itself, and a call made from inside one while another thread or task closes
        # must go on, or the two wait for each other.
        self._callers: collections.Counter[object] = collections.Counter()
        config = resolve_config(
            recall_config, settings_recall_config(self.settings), "recall_config"
        )
        self._core = MemoryCore(
            dimension=embedder.dimension,
            default_ns=ns if ns is not None else self.settings.namespace,
            config=config,
            has_extractor=extractor is not None,
            model_id=embedder.model_id,
        )

    @property
    def ns(self) -> str | None:
        """The namespace used when a call does not name one."""
        return self._core.default_ns

    @property
    def recall_config(self) -> RecallConfig:
        return self._core.config

    @property
    def token_counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = counter_from_setting(self.settings.context_tokenizer)
        return self._counter

    def _extractor(self) -> Extractor:
        if self.extractor is None:  # pragma: no cover - the core only asks when configured
            raise GraphmemError("no extractor is configured")
        return self.extractor

    def _extract(self, step: Extract) -> list[ExtractedFact]:
        extractor = self._extractor()
        with extractor_errors(extractor):
            return extracted_facts(extractor.extract(step.episodes))

    def _open_graph(self) -> Graph:
        return Graph.open(
            self.settings,
            self.embedder,
            apply_schema=self._apply_schema,
            target=self._target,
        )


class Memory(_ClientBase):
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
        return self

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
            _refuse_close_inside_a_call(self._callers, threading.get_ident())
            self._closing = True
            try:
                self._state.wait_for(lambda: not self._callers)
            except BaseException:  # interrupted while waiting: calls go on, on the open graph
                self._closing = False
                self._state.notify_all()
                raise
            graph, self._graph = self._graph, None
        try:
            if graph is not None:
                graph.close()
        finally:
            with self._state:
                self._closing = False
                self._state.notify_all()

    def __enter__(self) -> Memory:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
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
        while True:
            try:
                step = plan.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            if isinstance(step, LoadModel):
                load_model(self.embedder)
                value = None
            elif isinstance(step, Embed):
                with embedder_errors(self.embedder):
                    value = self.embedder.embed(step.texts)
            elif isinstance(step, Progress):
                reported(step.report(step.count))
                value = None
            elif isinstance(step, Extract):
                value = self._extract(step)
            else:
                value = self._transaction(step)

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
                rows = tx.run(run.query.text, run.params).data()

        timeout = self.settings.neo4j_transaction_timeout
        body = _time_limited(body, timeout)
        # One bookmark chain per client (the driver's, which graphmem's other queries use too):
        # on a cluster each transaction sees the writes of the ones before it.
        with (
            driver_errors(timeout),
            graph.driver.session(
                database=graph.database,
                bookmark_manager=graph.driver.execute_query_bookmark_manager,
            ) as session,
        ):
            if step.mode == "read":
                return session.execute_read(body)
            return session.execute_write(body)

    # --- the memory API ---------------------------------------------------------------------------
    def remember(
        self,
        text: str,
        *,
        ns: str | None = None,
        source: str | None = None,
        tags: Sequence[str] = (),
        valid_from: datetime | str | None = None,
        valid_to: datetime | str | None = None,
        supersedes: Sequence[str] = (),
        references: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
        pinned: bool = False,
        reason: str | None = None,
    ) -> Fact:
        """Store one fact as said (append-only) and return it; searchable on return.

        ``supersedes`` names believed facts this one replaces: in the same transaction they
        are retired (``status='superseded'``, ``retired_at``, ``valid_to``, ``superseded_by``)
        and linked by ``SUPERSEDES`` with ``reason``. ``references`` adds ``REFERENCES`` edges.
        """
        return self._run(
            self._core.remember(
                text,
                ns=ns,
                source=source,
                tags=tags,
                valid_from=valid_from,
                valid_to=valid_to,
                supersedes=supersedes,
                references=references,
                metadata=metadata,
                pinned=pinned,
                reason=reason,
            )
        )

    def remember_many(
        self,
        facts: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        vectors: npt.ArrayLike | None = None,
    ) -> list[Fact]:
        """Store many facts in one transaction (embedded in batches); all or nothing.

        ``vectors`` (one row per fact) skips the embedder, for callers that already have
        embeddings from the same model.
        """
        return self._run(self._core.remember_many(facts, ns=ns, vectors=vectors))

    def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        session_id: str | None = None,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> IngestResult:
        """Store messages verbatim as episodes; re-sent messages are not stored twice.

        The input is one call whatever ``batch_size``: repeats and external-id conflicts are
        found across all of it, and with stored messages, before anything is written (a stored
        message without an external id takes the one it is re-sent with). The new
        messages are then written in one transaction, or ``batch_size`` per transaction
        (embedded and extracted batch by batch); if one fails, the batches before it stay
        stored, and sending the same input again stores only the rest. ``progress`` is called
        with the number of input messages each step handled (first the repeats and the stored
        ones, then each batch), adding up to the input's length; :class:`AsyncMemory` also
        awaits what it returns when that is awaitable.
        """
        return self._run(
            self._core.ingest(
                messages, ns=ns, session_id=session_id, batch_size=batch_size, progress=progress
            )
        )

    def recall(
        self,
        query: str,
        *,
        ns: str | None = None,
        k: int = 10,
        kinds: Sequence[Kind] = ("fact", "episode"),
        as_of: datetime | str | None = None,
        valid_at: datetime | str | None = None,
        include_retired: bool = False,
        tags: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        expand_references: bool = True,
        min_score: float | None = None,
        config: RecallConfig | None = None,
        track_access: bool = True,
    ) -> RecallResult:
        """Hybrid search over believed facts and episodes, best first, scores broken down.

        ``as_of`` answers from what was believed at that transaction time; ``valid_at`` from
        what was true at that valid time; ``include_retired`` also returns retired facts.
        """
        return self._run(
            self._core.recall(
                query,
                ns=ns,
                k=k,
                kinds=kinds,
                as_of=as_of,
                valid_at=valid_at,
                include_retired=include_retired,
                tags=tags,
                since=since,
                until=until,
                expand_references=expand_references,
                min_score=min_score,
                config=config,
                track_access=track_access,
            )
        )

    def context(
        self, query: str, *, ns: str | None = None, budget_tokens: int, **recall_options: Any
    ) -> ContextBlock:
        """A prompt-ready block: pinned facts, then what recall finds, within the budget.

        Besides recall's options it takes ``k`` (hits recall may use, default 20),
        ``pinned_limit`` (pinned facts shown at most, default 50) and ``timezone`` (an IANA
        name such as ``"Europe/Lisbon"`` or a tzinfo; the zone of the dates, default UTC).
        """
        return self._run(
            self._core.context(
                query,
                ns=ns,
                budget_tokens=budget_tokens,
                counter=self.token_counter,
                **recall_options,
            )
        )

    def get(self, id: str, *, ns: str | None = None) -> Fact | Episode:
        """The fact or episode with this id."""
        return self._run(self._core.get(id, ns=ns))

    def history(self, id: str, *, ns: str | None = None) -> FactHistory:
        """The fact's SUPERSEDES chain both ways, with times, reasons and actors."""
        return self._run(self._core.history(id, ns=ns))

    def stats(self, *, ns: str | None = None) -> NamespaceStats:
        """Counts of facts (by status), episodes, sessions and relationships."""
        return self._run(self._core.stats(ns=ns))

    def pin(self, id: str, *, ns: str | None = None, pinned: bool = True) -> Fact:
        """Pin a fact so that ``context`` always shows it first (``pinned=False`` unpins)."""
        return self._run(self._core.pin(id, ns=ns, pinned=pinned))


class AsyncMemory(_ClientBase):
    """Asynchronous graphmem client with the same methods as :class:`Memory`.

    Embedding and extraction run in a worker thread so the event loop stays free.
    """

    _driver: neo4j.AsyncDriver | None = None
    _bookmarks: neo4j.api.AsyncBookmarkManager | None = None
    _database: str = "neo4j"
    _connecting: asyncio.Lock | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _idle: asyncio.Event | None = None
    _open_again: asyncio.Event | None = None
    _closing: bool = False

    async def connect(self) -> AsyncMemory:
        self._bind_loop()
        if self._driver is None:
            # A call like the others: close() waits for a connect under way.
            async with self._call():
                assert self._connecting is not None
                async with self._connecting:  # calls that race here share one connection
                    if self._driver is None:
                        await self._open()
        return self

    def _bind_loop(self) -> None:
        """Tie the client to the running event loop, or refuse a second loop while connected."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._driver is not None:
                raise ClientUsageError(
                    "this AsyncMemory connected in another event loop, and its connections "
                    "belong to that loop: use one AsyncMemory per event loop (per "
                    "asyncio.run), or close it in its loop before using it in another"
                )
            # The lock and events, like the driver, belong to the loop they are used in.
            self._loop, self._connecting = loop, asyncio.Lock()
            self._idle, self._open_again = asyncio.Event(), asyncio.Event()
            self._open_again.set()

    def _schema_work(self) -> tuple[Neo4jTarget, list[str]]:
        """Applies (or checks) the schema over a sync driver, closed before it returns: the
        target, and the bookmarks that end the schema work's chain."""
        with self._open_graph() as graph:
            return graph.target, list(graph.driver.execute_query_bookmark_manager.get_bookmarks())

    async def _open(self) -> None:
        # The schema work is synchronous; in its worker thread it closes its own driver, also
        # when the call that connects is cancelled meanwhile and no one waits for it.
        target, schema_bookmarks = await asyncio.to_thread(self._schema_work)
        # Continue the schema work's bookmark chain (see Memory._transaction).
        self._bookmarks = neo4j.AsyncGraphDatabase.bookmark_manager(
            initial_bookmarks=neo4j.Bookmarks.from_raw_values(*schema_bookmarks)
        )
        self._database = target.database
        self._driver = await open_async_driver(
            target, connection_timeout=self.settings.neo4j_connection_timeout
        )

    async def close(self) -> None:
        """Close the connections once the calls in flight have finished; calls made meanwhile
        wait, and a call made afterwards connects again."""
        _refuse_close_inside_a_call(self._callers, asyncio.current_task())
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
        if self._driver is None and not self._callers:
            self._loop = None  # free to connect in another event loop

    async def _close_driver(self) -> None:
        driver, self._driver = self._driver, None
        # Connections of an event loop that has been closed cannot be closed from another
        # loop (the driver raises RuntimeError); they ended with their loop, so are dropped.
        if driver is not None and not (self._loop is not None and self._loop.is_closed()):
            await driver.close()

    async def __aenter__(self) -> AsyncMemory:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
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
        while True:
            try:
                step = plan.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            if isinstance(step, LoadModel):
                await asyncio.to_thread(load_model, self.embedder)
                value = None
            elif isinstance(step, Embed):
                with embedder_errors(self.embedder):
                    value = await asyncio.to_thread(self.embedder.embed, step.texts)
            elif isinstance(step, Progress):
                result = step.report(step.count)  # on the event loop: a quick update
                value = (await result) if inspect.isawaitable(result) else None
            elif isinstance(step, Extract):
                value = await self._extract_async(step)
            else:
                value = await self._transaction(step)

    async def _extract_async(self, step: Extract) -> list[ExtractedFact]:
        """Runs ``extract`` in a worker thread, and awaits what it returns if that is awaitable
        (an ``async def extract``, or any callable that returns a coroutine)."""
        extractor = self._extractor()
        with extractor_errors(extractor):
            result = await asyncio.to_thread(extractor.extract, step.episodes)
            if inspect.isawaitable(result):
                result = await result
            return extracted_facts(result)

    async def _transaction(self, step: Transaction[T]) -> T:
        driver = (await self.connect())._driver
        assert driver is not None

        async def body(tx: neo4j.AsyncManagedTransaction) -> T:
            work: Work[T] = step.work()
            rows: Rows | None = None
            while True:
                try:
                    run: Run = work.send(rows)  # type: ignore[arg-type]
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                run.query.check_params(run.params)
                result = await tx.run(run.query.text, run.params)
                rows = await result.data()

        timeout = self.settings.neo4j_transaction_timeout
        body = _time_limited(body, timeout)
        with driver_errors(timeout):
            async with driver.session(
                database=self._database, bookmark_manager=self._bookmarks
            ) as session:
                if step.mode == "read":
                    return await session.execute_read(body)
                return await session.execute_write(body)

    async def remember(
        self,
        text: str,
        *,
        ns: str | None = None,
        source: str | None = None,
        tags: Sequence[str] = (),
        valid_from: datetime | str | None = None,
        valid_to: datetime | str | None = None,
        supersedes: Sequence[str] = (),
        references: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
        pinned: bool = False,
        reason: str | None = None,
    ) -> Fact:
        """See :meth:`Memory.remember`."""
        return await self._run(
            self._core.remember(
                text,
                ns=ns,
                source=source,
                tags=tags,
                valid_from=valid_from,
                valid_to=valid_to,
                supersedes=supersedes,
                references=references,
                metadata=metadata,
                pinned=pinned,
                reason=reason,
            )
        )

    async def remember_many(
        self,
        facts: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        vectors: npt.ArrayLike | None = None,
    ) -> list[Fact]:
        """See :meth:`Memory.remember_many`."""
        return await self._run(self._core.remember_many(facts, ns=ns, vectors=vectors))

    async def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        session_id: str | None = None,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> IngestResult:
        """See :meth:`Memory.ingest`."""
        return await self._run(
            self._core.ingest(
                messages, ns=ns, session_id=session_id, batch_size=batch_size, progress=progress
            )
        )

    async def recall(
        self,
        query: str,
        *,
        ns: str | None = None,
        k: int = 10,
        kinds: Sequence[Kind] = ("fact", "episode"),
        as_of: datetime | str | None = None,
        valid_at: datetime | str | None = None,
        include_retired: bool = False,
        tags: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        expand_references: bool = True,
        min_score: float | None = None,
        config: RecallConfig | None = None,
        track_access: bool = True,
    ) -> RecallResult:
        """See :meth:`Memory.recall`."""
        return await self._run(
            self._core.recall(
                query,
                ns=ns,
                k=k,
                kinds=kinds,
                as_of=as_of,
                valid_at=valid_at,
                include_retired=include_retired,
                tags=tags,
                since=since,
                until=until,
                expand_references=expand_references,
                min_score=min_score,
                config=config,
                track_access=track_access,
            )
        )

    async def context(
        self, query: str, *, ns: str | None = None, budget_tokens: int, **recall_options: Any
    ) -> ContextBlock:
        """See :meth:`Memory.context`."""
        # The first call loads the tokenizer from disk: in a worker thread, not on the loop.
        counter = self._counter
        if counter is None:
            counter = await asyncio.to_thread(lambda: self.token_counter)
        return await self._run(
            self._core.context(
                query, ns=ns, budget_tokens=budget_tokens, counter=counter, **recall_options
            )
        )

    async def get(self, id: str, *, ns: str | None = None) -> Fact | Episode:
        """See :meth:`Memory.get`."""
        return await self._run(self._core.get(id, ns=ns))

    async def history(self, id: str, *, ns: str | None = None) -> FactHistory:
        """See :meth:`Memory.history`."""
        return await self._run(self._core.history(id, ns=ns))

    async def stats(self, *, ns: str | None = None) -> NamespaceStats:
        """See :meth:`Memory.stats`."""
        return await self._run(self._core.stats(ns=ns))

    async def pin(self, id: str, *, ns: str | None = None, pinned: bool = True) -> Fact:
        """See :meth:`Memory.pin`."""
        return await self._run(self._core.pin(id, ns=ns, pinned=pinned))


def _refuse_close_inside_a_call(callers: collections.Counter[object], caller: object) -> None:
    """close() waits for the calls in flight, so from inside one (a progress callback) it
    would wait for itself forever: refused instead."""
    if callers[caller]:
        raise ClientUsageError(
            "close() was called from inside a call of this client (such as its progress "
            "callback), and would wait for that call to end: close the client after the call"
        )


__all__ = ["AsyncMemory", "Memory"]
