"""The synchronous client, :class:`Memory`; :mod:`graphmem.client.aio` has its async twin.

Both have the same methods with the same arguments and results (a unit test compares them);
all logic lives in :mod:`graphmem.core`, and each client only carries out the plans it returns
(embedding, extraction and Neo4j transactions). Three lines for an agent::

    with Memory(ns="user-42") as memory:
        memory.remember("The user works at Microsoft.")
        print(memory.context("where does the user work?", budget_tokens=300).text)
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import neo4j

from graphmem.client.audit import Audit
from graphmem.client.graph import Graph
from graphmem.core.forget.plan import ForgetOptions
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
from graphmem.models import (
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    FactInput,
    IngestResult,
    Message,
    NamespaceStats,
    RecallResult,
)
from graphmem.models.consolidation import (
    ConsolidationResult,
    ConsolidationRunRecord,
    UndoResult,
)
from graphmem.models.erasure import ForgetResult, ForgetVerification, ReviewFlag
from graphmem.store.db import driver_errors, no_retry_on_memory

if TYPE_CHECKING:
    import numpy.typing as npt

from graphmem.client.base import ClientBase, refuse_close_inside_a_call, rows_of, time_limited
from graphmem.client.namespaces import NamespaceMethods
from graphmem.core.recall.scope import ContextOptions, RecallOptions
from graphmem.models import FactFields

T = TypeVar("T")
logger = logging.getLogger("graphmem")


class Memory(ClientBase, NamespaceMethods):
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

    @property
    def audit(self) -> Audit:
        """The audits: beliefs, truths, diff, timeline, contradictions, explain."""
        return Audit(self._core, self._run)

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
            with embedder_errors(self.embedder):
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
                with no_retry_on_memory():
                    rows = rows_of(tx.run(run.query.text, run.params), run.plain_rows)

        timeout = self.settings.neo4j_transaction_timeout
        body = time_limited(body, timeout)
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
        allow_forgotten: bool = False,
        **fields: Unpack[FactFields],
    ) -> Fact:
        """Store one fact as said (append-only) and return it; searchable on return. The
        fields are those of :class:`~graphmem.models.FactFields`.

        ``supersedes`` names believed facts this one replaces: in the same transaction they
        are retired (``status='superseded'``, ``retired_at``, ``valid_to``, ``superseded_by``)
        and linked by ``SUPERSEDES`` with ``reason``. ``references`` adds ``REFERENCES`` edges.
        A text the namespace forgot is refused (ForgottenContentError) unless
        ``allow_forgotten``, which stores it flagged for review.
        """
        return self._run(
            self._core.remember(text, ns=ns, allow_forgotten=allow_forgotten, **fields)
        )

    def remember_many(
        self,
        facts: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        vectors: npt.ArrayLike | None = None,
        allow_forgotten: bool = False,
    ) -> list[Fact]:
        """Store many facts in one transaction (embedded in batches); all or nothing.

        ``vectors`` (one row per fact) skips the embedder, for callers that already have
        embeddings from the same model.
        """
        return self._run(
            self._core.remember_many(facts, ns=ns, vectors=vectors, allow_forgotten=allow_forgotten)
        )

    def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        session_id: str | None = None,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
        extract: bool | None = None,
        allow_forgotten: bool = False,
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

        ``extract`` derives atomic facts from the messages (``DERIVED_FROM`` each): by default
        when the client was given an ``extractor``; ``True`` uses it, or the LLM that
        ``GRAPHMEM_LLM`` configures; ``False`` stores the messages only. A stored message is
        read once per extractor: sending it again with extraction on extracts it only if
        that extractor never read it. A forgotten text is refused as :meth:`remember` does;
        an extracted one is left out (``forgotten_skipped``).
        """
        return self._run(
            self._core.ingest(
                messages,
                ns=ns,
                session_id=session_id,
                batch_size=batch_size,
                progress=progress,
                extractor=self._extractor_for(extract),
                allow_forgotten=allow_forgotten,
            )
        )

    def recall(
        self,
        query: str,
        *,
        ns: str | None = None,
        **options: Unpack[RecallOptions],
    ) -> RecallResult:
        """Hybrid search over believed facts and episodes, best first, scores broken down.

        ``as_of`` answers from what was believed at that transaction time; ``valid_at`` from
        what was true at that valid time; ``include_retired`` also returns retired facts. The
        options are those of :class:`~graphmem.core.recall.scope.RecallOptions` (``k``,
        ``kinds``, ``tags``, ``since``, ``until``, ``min_score``, ``config``, ...).
        """
        return self._run(self._core.recall(query, ns=ns, **options))

    def context(
        self,
        query: str,
        *,
        ns: str | None = None,
        budget_tokens: int,
        **options: Unpack[ContextOptions],
    ) -> ContextBlock:
        """A prompt-ready block: pinned facts, then what recall finds, within the budget.

        Its options (:class:`~graphmem.core.recall.scope.ContextOptions`) are recall's, with
        ``k`` (hits recall may use) 20 by default, and ``pinned_limit`` (pinned facts shown at
        most, default 50), ``timezone`` (an IANA name or a tzinfo; default UTC) and
        ``short_ids`` (ids in the text by 8 characters where those name them alone).
        """
        return self._run(
            self._core.context(
                query,
                ns=ns,
                budget_tokens=budget_tokens,
                counter=self.token_counter,
                **options,
            )
        )

    def get(self, id: str, *, ns: str | None = None) -> Fact | Episode:
        """The fact or episode with this id."""
        return self._run(self._core.get(id, ns=ns))

    def history(self, id: str, *, ns: str | None = None) -> FactHistory:
        """The fact's SUPERSEDES chain both ways, with times, reasons and actors."""
        return self._run(self._core.history(id, ns=ns))

    def match_ids(self, prefixes: Iterable[str], *, ns: str | None = None) -> dict[str, list[str]]:
        """Up to three full ids (facts, episodes, forgotten ones) for each id prefix."""
        return self._run(self._core.match_ids(prefixes, ns=ns))

    def stats(self, *, ns: str | None = None) -> NamespaceStats:
        """Counts of facts (by status), episodes, sessions and relationships."""
        return self._run(self._core.stats(ns=ns))

    def pin(self, id: str, *, ns: str | None = None, pinned: bool = True) -> Fact:
        """Pin a fact so that ``context`` always shows it first (``pinned=False`` unpins)."""
        return self._run(self._core.pin(id, ns=ns, pinned=pinned))

    # --- conflicts, retractions and consolidation -------------------------------------------------
    def contradict(
        self, a: str, b: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """Open a ``CONTRADICTS`` edge between two believed facts: both stay believed, and
        recall and context mark each with the other, until :meth:`resolve` settles it."""
        return self._run(self._core.contradict(a, b, reason=reason, ns=ns))

    def resolve(
        self, a: str, b: str, *, keep: str, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """Settle the open contradiction between ``a`` and ``b``: the fact not kept is
        superseded by ``keep``, and the edge gets ``resolved_at``, ``resolution`` (the
        reason) and ``resolved_by``. Returns [kept, superseded]."""
        return self._run(self._core.resolve(a, b, keep=keep, reason=reason, ns=ns))

    def retract(self, id: str, *, reason: str | None = None, ns: str | None = None) -> Fact:
        """Retract a believed fact ("that was never true"): status ``retracted``, out of
        current recall, still what was believed ``as_of`` an earlier time."""
        return self._run(self._core.retract(id, reason=reason, ns=ns))

    def consolidate(
        self,
        *,
        ns: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        progress: Callable[[int, int], object] | None = None,
        tiers: bool | None = None,
        summaries: bool | None = None,
    ) -> ConsolidationResult:
        """One consolidation run: the gate (lock, minimum interval and new facts; ``force``
        passes all but the lock), then each cluster proposed, validated and applied in one
        transaction (``progress(done, total)`` after each); then ``summaries`` and ``tiers``
        (default: the settings; docs/guides/importance.md). ``dry_run`` writes nothing.
        ConsolidationBusyError if another run holds the namespace."""
        label = self._proposer_label()
        options = {"force": force, "dry_run": dry_run, "tiers": tiers, "summaries": summaries}
        return self._run(self._consolidation(label, ns, progress, options))

    def undo(self, run_id: str, *, ns: str | None = None) -> UndoResult:
        """Undo a consolidation run exactly (its changes, edges, resolutions and review
        flags); UndoRefusedError when a later write built on what it changed."""
        return self._run(self._core.undo(run_id, ns=ns))

    def consolidation_runs(
        self, *, ns: str | None = None, ids: Sequence[str] | None = None, limit: int = 20
    ) -> list[ConsolidationRunRecord]:
        """The namespace's consolidation runs, newest first, as recorded: proposer, model,
        raw plans, applied and rejected operations, review candidates, usage, timings."""
        return self._run(self._core.consolidation_runs(ns=ns, ids=ids, limit=limit))

    # --- erasure and review -----------------------------------------------------------------------
    def forget(
        self,
        ids: str | Sequence[str] | None = None,
        *,
        reason: str,
        ns: str | None = None,
        **options: Unpack[ForgetOptions],
    ) -> ForgetResult:
        """Erase what exactly one of ``ids`` (facts or episodes), ``source`` (facts),
        ``session`` (episodes) or ``everything=True`` names, with the facts derived only from
        erased messages, each node becoming a content-free ``:Tombstone``. Units of
        ``batch_size`` (500) nodes commit one by one, each whole or not at all; ``dry_run``
        writes nothing. See docs/guides/forget.md."""
        return self._run(self._core.forget(ids, reason=reason, ns=ns, **options))

    def verify_forgotten(
        self, target: str, *, text: str | None = None, ns: str | None = None
    ) -> ForgetVerification:
        """Search every read path for what ``target`` (an erased id, source, session or
        erasure id) erased; with ``text``, for those words too, also through the indexes.
        ``clean``: tombstones found, and nothing else."""
        return self._run(self._core.verify_forgotten(target, text=text, ns=ns))

    def review(
        self,
        *,
        fact_id: str | None = None,
        open_only: bool = True,
        limit: int = 100,
        ns: str | None = None,
    ) -> list[ReviewFlag]:
        """The review flags (open ones unless ``open_only=False``), oldest first: what rested
        on a fact forgotten, superseded, merged or retracted, and texts stored again."""
        return self._run(
            self._core.review(fact_id=fact_id, open_only=open_only, limit=limit, ns=ns)
        )

    def confirm(
        self, id: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[ReviewFlag]:
        """Close the open review flags of a fact or episode (it stands); returns them."""
        return self._run(self._core.confirm(id, reason=reason, ns=ns))


__all__ = ["Memory"]
