# Generated from graphmem/client/api_aio.py by tools/unasync.py: edit that file, then run it.
"""The client's methods, written once: :class:`MemoryAPI` (and ``memory.audit``'s
:class:`AuditAPI`) turn each method's arguments into one operation of the table
(:mod:`graphmem.ops.table`) and hand it to the client's transport, ``_send``: the local one
(:class:`~graphmem.client.Memory`: the core's plans, the Neo4j driver) or the HTTP one
(:class:`~graphmem.remote.RemoteMemory`: ``graphmem serve``). The sync methods
(:mod:`graphmem.client.api_sync`) are generated from this file by ``tools/unasync.py``; edit
this one. It imports neither the driver nor the embedder."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

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
from graphmem.models.audit import Beliefs, ContradictionRecord, Diff, Explanation, Timeline
from graphmem.models.consolidation import ConsolidationResult, ConsolidationRunRecord, UndoResult
from graphmem.models.erasure import ForgetResult, ForgetVerification, ReviewFlag
from graphmem.models.namespaces import (
    DEFAULT_PAGE,
    DROP_BATCH,
    DropResult,
    ImportResult,
    NamespaceSummary,
)
from graphmem.ops.table import Operation, by_name

if TYPE_CHECKING:
    import numpy.typing as npt

    from graphmem.core.forget.plan import ForgetOptions
    from graphmem.core.recall.scope import ContextOptions, RecallOptions
    from graphmem.models import FactFields

Time = datetime | str


class Sends:
    """What a transport gives the methods: ``_send``, which carries out one operation with
    the library's keyword arguments and returns its result."""

    if TYPE_CHECKING:

        def _send(self, op: Operation, args: dict[str, Any]) -> Any: ...


class AuditAPI:
    """``memory.audit``: what was believed and why it changed. Each method is one read and
    counts nothing as accessed. Times are ISO 8601 with a zone (``2026-03-01T09:00:00Z``), a
    datetime with a zone, a date alone (midnight UTC) or a friendly form (``now``, ``today``,
    ``yesterday``, ``3 days ago``); a time of day without a zone is refused."""

    def __init__(self, transport: Sends) -> None:
        self._transport = transport

    def beliefs(
        self,
        as_of: Time | None = None,
        *,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """The facts believed at transaction time ``as_of`` (now when None), each as it was
        believed then (status and valid interval), newest first or ranked by ``query``; the
        facts believed then and forgotten since are listed without their words."""
        args = {"as_of": as_of, "query": query, "limit": limit, "ns": ns}
        return self._transport._send(by_name("audit.beliefs"), args)

    def truths(
        self,
        valid_at: Time,
        *,
        as_of: Time | None = None,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """The facts believed (now, or at ``as_of``) to have been true at valid time
        ``valid_at``: a fact superseded since still counts within its closed interval."""
        args = {"valid_at": valid_at, "as_of": as_of, "query": query, "limit": limit, "ns": ns}
        return self._transport._send(by_name("audit.truths"), args)

    def diff(self, since: Time, until: Time | None = None, *, ns: str | None = None) -> Diff:
        """What changed after ``since`` up to ``until`` (now when None): facts that became
        believed, retired (and how, by what, why), forgotten, contradictions opened and
        resolved."""
        args = {"since": since, "until": until, "ns": ns}
        return self._transport._send(by_name("audit.diff"), args)

    def timeline(self, id: str, *, ns: str | None = None) -> Timeline:
        """The lineage of fact ``id`` (forgotten too): its versions and every change to them
        (supersessions, merges, retractions, contradictions, references, review flags,
        erasures) with both clocks, actors, reasons and consolidation runs."""
        return self._transport._send(by_name("audit.timeline"), {"id": id, "ns": ns})

    def contradictions(
        self, *, open_only: bool = True, limit: int = 100, ns: str | None = None
    ) -> list[ContradictionRecord]:
        """The contradictions, open ones only unless ``open_only`` is False, oldest first."""
        args = {"open_only": open_only, "limit": limit, "ns": ns}
        return self._transport._send(by_name("audit.contradictions"), args)

    def explain(self, id: str, *, ns: str | None = None) -> Explanation:
        """The last change to fact ``id`` in words an agent can quote ("believed from … until
        …, replaced by … because … (consolidation run …)")."""
        return self._transport._send(by_name("audit.explain"), {"id": id, "ns": ns})


class MemoryAPI(Sends):
    """The methods of the graphmem client. Every method takes ``ns``, the namespace; it
    defaults to the client's ``ns``, which defaults to the ``GRAPHMEM_NAMESPACE`` setting
    (``default``)."""

    def _op(self, name: str, args: dict[str, Any]) -> Any:
        return self._send(by_name(name), args)

    @property
    def audit(self) -> AuditAPI:
        """The audits: beliefs, truths, diff, timeline, contradictions, explain."""
        return AuditAPI(self)

    # --- the memory API -------------------------------------------------------------------------
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
        args = {"text": text, "ns": ns, "allow_forgotten": allow_forgotten, **fields}
        return self._op("remember", args)

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
        embeddings from the same model (not through ``graphmem serve``, which embeds with its
        own model: ClientUsageError).
        """
        args = {"facts": facts, "ns": ns, "vectors": vectors, "allow_forgotten": allow_forgotten}
        return self._op("remember_many", args)

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
        ones, then each batch), adding up to the input's length (through ``graphmem serve``,
        once, with every message); the async client also awaits what it returns when that
        is awaitable.

        ``extract`` derives atomic facts from the messages (``DERIVED_FROM`` each): by default
        when the client was given an ``extractor``; ``True`` uses it, or the LLM that
        ``GRAPHMEM_LLM`` configures; ``False`` stores the messages only. A stored message is
        read once per extractor: sending it again with extraction on extracts it only if
        that extractor never read it. A forgotten text is refused as :meth:`remember` does;
        an extracted one is left out (``forgotten_skipped``).
        """
        args = {
            "messages": messages,
            "ns": ns,
            "session_id": session_id,
            "batch_size": batch_size,
            "progress": progress,
            "extract": extract,
            "allow_forgotten": allow_forgotten,
        }
        return self._op("ingest", args)

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
        return self._op("recall", {"query": query, "ns": ns, **options})

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
        args = {"query": query, "ns": ns, "budget_tokens": budget_tokens, **options}
        return self._op("context", args)

    def get(self, id: str, *, ns: str | None = None) -> Fact | Episode:
        """The fact or episode with this id."""
        return self._op("get", {"id": id, "ns": ns})

    def history(self, id: str, *, ns: str | None = None) -> FactHistory:
        """The fact's SUPERSEDES chain both ways, with times, reasons and actors."""
        return self._op("history", {"id": id, "ns": ns})

    def stats(self, *, ns: str | None = None) -> NamespaceStats:
        """Counts of facts (by status), episodes, sessions and relationships."""
        return self._op("stats", {"ns": ns})

    def pin(self, id: str, *, ns: str | None = None, pinned: bool = True) -> Fact:
        """Pin a fact so that ``context`` always shows it first (``pinned=False`` unpins)."""
        return self._op("pin", {"id": id, "ns": ns, "pinned": pinned})

    # --- conflicts, retractions and consolidation -------------------------------------------------
    def contradict(
        self, a: str, b: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """Open a ``CONTRADICTS`` edge between two believed facts: both stay believed, and
        recall and context mark each with the other, until :meth:`resolve` settles it."""
        return self._op("contradict", {"a": a, "b": b, "reason": reason, "ns": ns})

    def resolve(
        self, a: str, b: str, *, keep: str, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """Settle the open contradiction between ``a`` and ``b``: the fact not kept is
        superseded by ``keep``, and the edge gets ``resolved_at``, ``resolution`` (the
        reason) and ``resolved_by``. Returns [kept, superseded]."""
        args = {"a": a, "b": b, "keep": keep, "reason": reason, "ns": ns}
        return self._op("resolve", args)

    def retract(self, id: str, *, reason: str | None = None, ns: str | None = None) -> Fact:
        """Retract a believed fact ("that was never true"): status ``retracted``, out of
        current recall, still what was believed ``as_of`` an earlier time."""
        return self._op("retract", {"id": id, "reason": reason, "ns": ns})

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
        transaction (``progress(done, total)`` after each; through ``graphmem serve``, once at
        the end); then ``summaries`` and ``tiers`` (default: the settings;
        docs/guides/importance.md). It applies at once, here and in the remote clients (a run
        can be undone); ``dry_run=True`` writes nothing (over REST and MCP, a run is a dry run
        unless ``confirm`` is true: see docs/reference/surfaces.md). ConsolidationBusyError if
        another run holds the namespace."""
        args = {
            "ns": ns,
            "force": force,
            "dry_run": dry_run,
            "progress": progress,
            "tiers": tiers,
            "summaries": summaries,
        }
        return self._op("consolidate", args)

    def undo(self, run_id: str, *, ns: str | None = None) -> UndoResult:
        """Undo a consolidation run exactly (its changes, edges, resolutions and review
        flags); UndoRefusedError when a later write built on what it changed."""
        return self._op("undo", {"run_id": run_id, "ns": ns})

    def consolidation_runs(
        self, *, ns: str | None = None, ids: Sequence[str] | None = None, limit: int = 20
    ) -> list[ConsolidationRunRecord]:
        """The namespace's consolidation runs, newest first, as recorded: proposer, model,
        raw plans, applied and rejected operations, review candidates, usage, timings."""
        return self._op("consolidation_runs", {"ns": ns, "ids": ids, "limit": limit})

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
        ``batch_size`` (500) nodes commit one by one, each whole or not at all. It erases at
        once, here and in the remote clients; ``dry_run=True`` only reports what would go (over
        REST and MCP, a forget is a dry run unless ``confirm`` is true: see
        docs/reference/surfaces.md). Through ``graphmem serve`` the actor is the API key's name
        (``actor`` is refused). See docs/guides/forget.md."""
        return self._op("forget", {"ids": ids, "reason": reason, "ns": ns, **options})

    def verify_forgotten(
        self, target: str, *, text: str | None = None, ns: str | None = None
    ) -> ForgetVerification:
        """Search every read path for what ``target`` (an erased id, source, session or
        erasure id) erased; with ``text``, for those words too, also through the indexes.
        ``clean``: tombstones found, and nothing else."""
        args = {"target": target, "text": text, "ns": ns}
        return self._op("verify_forgotten", args)

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
        args = {"fact_id": fact_id, "open_only": open_only, "limit": limit, "ns": ns}
        return self._op("review", args)

    def confirm(
        self, id: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[ReviewFlag]:
        """Close the open review flags of a fact or episode (it stands); returns them."""
        return self._op("confirm", {"id": id, "reason": reason, "ns": ns})

    # --- namespaces -------------------------------------------------------------------------------
    def namespaces(self) -> list[NamespaceSummary]:
        """The namespaces, by name, with their counts and their last write (through
        ``graphmem serve``: those the API key opens). A namespace that an import has staged
        data for and not made visible shows it as ``import_pending``."""
        return self._op("namespaces", {})

    def export(
        self, ns: str | None = None, *, page_size: int = DEFAULT_PAGE
    ) -> Iterator[dict[str, Any]]:
        """The records of an export of namespace ``ns`` with its whole history, JSON-ready, one
        page (``page_size`` nodes, one read transaction) at a time: a header, every node, every
        relationship between them, and an end record with the counts. Write one per line for
        the JSONL file ``graphmem export`` writes (docs/guides/namespaces.md describes it).
        Each page is consistent on its own; ``changed_during_export`` in the end record says
        whether the namespace changed meanwhile."""
        return self._op("export", {"ns": ns, "page_size": page_size})

    def import_(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        ns: str | None = None,
        batch_size: int = DEFAULT_PAGE,
        progress: Callable[[int], object] | None = None,
    ) -> ImportResult:
        """Import an export's records into namespace ``ns``, which must be empty: ids and both
        clocks kept exactly, except ids another namespace of the database already holds, which
        get new ones (``remapped``; every reference follows). All or nothing: the records are
        staged out of sight in batches of ``batch_size`` and made visible in one transaction;
        a failed import removes what it staged, a killed one leaves it invisible until the
        next import into ``ns`` (or a drop of it) removes it. Refused before anything is
        written: a namespace that holds anything (NamespaceNotEmptyError), records that are not
        a whole export of this format version (ExportFormatError), vectors of another embedder
        (ImportEmbedderMismatchError). ``progress`` is called with the records each batch
        staged (through ``graphmem serve``, an admin key, once with every record)."""
        args = {"records": records, "ns": ns, "batch_size": batch_size, "progress": progress}
        return self._op("import_", args)

    def drop_namespace(
        self,
        ns: str,
        *,
        confirm: bool = False,
        dry_run: bool = False,
        batch_size: int = DROP_BATCH,
        progress: Callable[[int], object] | None = None,
    ) -> DropResult:
        """Remove every node of namespace ``ns`` for good, ``batch_size`` per transaction:
        facts, episodes, tombstones, consolidation runs and records, lock nodes, and what
        unfinished imports into it staged. Unlike ``forget(everything=True)`` it keeps no
        tombstone, so the audit trail goes too and the same texts may be stored again.
        Refused without ``confirm=True`` (ConfirmationRequiredError, HTTP 409 over REST) on
        every surface; ``dry_run`` counts what would go (docs/reference/surfaces.md).
        ``progress`` is called with the nodes each batch deleted (through
        ``graphmem serve``, an admin key, once with every node)."""
        args = {
            "ns": ns,
            "confirm": confirm,
            "dry_run": dry_run,
            "batch_size": batch_size,
            "progress": progress,
        }
        return self._op("drop_namespace", args)


__all__ = ["AuditAPI", "MemoryAPI", "Sends"]
