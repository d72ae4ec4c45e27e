"""The table of operations: what each operation of the library is on the wire.

One :class:`Operation` a row: its name (the REST operation id), the library method it is, the
models of its request and result, its HTTP method and path, the role an API key needs (and so
whether it writes), whether ``graphmem serve`` answers it once per idempotency key, and the MCP
tool that exposes it. Nothing here does I/O: the service builds its routes and role checks from
the rows (:mod:`graphmem.service.routes`), the HTTP transport its requests
(:mod:`graphmem.remote.wire`), the MCP server its tools' roles, and ``tools/docs.py`` the REST
reference. A new operation is a row here, its logic in the core, and its test."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel

from graphmem.models import (
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    IngestResult,
    NamespaceStats,
    RecallResult,
)
from graphmem.models.audit import Beliefs, ContradictionRecord, Diff, Explanation, Timeline
from graphmem.models.consolidation import ConsolidationResult, ConsolidationRunRecord, UndoResult
from graphmem.models.erasure import ForgetResult, ForgetVerification, ReviewFlag
from graphmem.models.keys import Role
from graphmem.models.namespaces import DropResult, ImportResult, NamespaceSummary
from graphmem.models.requests import (
    BeliefsQuery,
    ConsolidateRequest,
    ContextRequest,
    ContradictionsQuery,
    ContradictRequest,
    DiffQuery,
    DropRequest,
    ForgetRequest,
    IngestRequest,
    PinRequest,
    ReasonRequest,
    RecallRequest,
    RememberManyRequest,
    RememberRequest,
    ResolveRequest,
    ReviewQuery,
    RunsQuery,
    TruthsQuery,
    VerifyRequest,
)

#: The path of one namespace: most operations sit under it.
NS = "/v1/namespaces/{ns}"


@dataclass(frozen=True)
class Operation:
    """One operation of graphmem as the library, REST and MCP expose it."""

    #: The REST operation id (what generated clients call their methods).
    name: str
    #: The library method: a method of the client, or ``audit.<name>`` of ``memory.audit``.
    call: str
    http: Literal["GET", "POST"]
    #: The path, its parameters in braces (``{ns}``, ``{id}``, ``{run_id}``): each is the
    #: library argument of that name.
    path: str
    #: What a success answers: a result model, a list of one, or a union.
    result: Any
    #: The role an API key needs (``None``: any valid key, for what each key may see).
    role: Role | None
    #: The OpenAPI tag that groups it.
    tag: str
    #: What the REST reference and ``/docs`` say of it.
    doc: str
    #: The JSON body of a POST or the query parameters of a GET; its fields are the library's
    #: keyword arguments (but those in :attr:`negated`).
    request: type[BaseModel] | None = None
    #: The status of a success.
    status: int = 200
    #: Whether ``graphmem serve`` answers it once per ``Idempotency-Key``, so that a client may
    #: send it again; ``derive_ids``: its new ids derive from the key.
    recorded: bool = False
    derive_ids: bool = False
    #: A library flag and the wire field that is its negation: the library erases unless
    #: ``dry_run``, the service only when ``confirm`` is true.
    negated: tuple[str, str] | None = None
    #: The MCP tool that exposes it, if one does.
    tool: str | None = None
    #: Its body or its answer is a stream of JSON lines (an import, an export).
    streamed: bool = False

    @property
    def writes(self) -> bool:
        """Whether it may change the graph: the operations whose role is above ``read``."""
        return self.role in ("write", "admin")

    @property
    def timed(self) -> bool:
        """Whether a request is held to the service's request timeout: what only reads, but
        an export (it takes as long as the namespace is large). A write runs to its end: one
        cut short could have committed some of its transactions and not others."""
        return not self.writes and not self.streamed

    @property
    def path_params(self) -> tuple[str, ...]:
        """The names of the path's parameters, in order."""
        return tuple(re.findall(r"\{(\w+)\}", self.path))

    def matches(self, http: str, path: str) -> bool:
        """Whether a request (its method and path) is one of this operation."""
        return http == self.http and _pattern(self.path).fullmatch(path.rstrip("/")) is not None


@cache
def _pattern(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{\w+\})", path)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))


def _op(
    name: str,
    http: Literal["GET", "POST"],
    path: str,
    result: Any,
    role: Role | None,
    tag: str,
    doc: str,
    request: type[BaseModel] | None = None,
    *,
    call: str | None = None,
    **more: Any,
) -> Operation:
    return Operation(name, call or name, http, path, result, role, tag, doc, request, **more)


W: dict[str, Any] = {"recorded": True}  # a write answered once per idempotency key
NEW: dict[str, Any] = {
    "recorded": True,
    "derive_ids": True,
    "status": 201,
}  # ... that stores new nodes

# fmt: off
#: Every operation, in the order of the REST reference.
OPERATIONS: tuple[Operation, ...] = (
    _op("remember", "POST", NS + "/facts", Fact, "write", "remember",
        "Remember one fact; `supersedes`, `contradicts` and `references` link it to others.",
        RememberRequest, tool="add_memory", **NEW),
    _op("remember_many", "POST", NS + "/facts/batch", list[Fact], "write", "remember",
        "Remember several facts in one transaction: all of them or none (at most 1,000 facts\n"
        "and 4 MB of text a call: 413 beyond).",
        RememberManyRequest, **NEW),
    _op("ingest", "POST", NS + "/messages", IngestResult, "write", "remember",
        "Store conversation messages verbatim, each once (and the facts an extractor finds);\n"
        "at most 1,000 messages and 4 MB of text a call (413 beyond).",
        IngestRequest, tool="add_messages", **NEW),
    _op("recall", "POST", NS + "/search", RecallResult, "read", "recall",
        "Hybrid recall: what is believed now (or `as_of` a transaction time, `valid_at` a\n"
        "valid time), ranked.",
        RecallRequest, tool="search_memories"),
    _op("context", "POST", NS + "/context", ContextBlock, "read", "recall",
        "A prompt-ready block within `budget_tokens`: pinned facts, then the best hits.",
        ContextRequest, tool="get_context"),
    _op("get", "GET", NS + "/memories/{id}", Fact | Episode, "read", "recall",
        "One fact or message by id (or a unique 8+ character prefix).", tool="get_memory"),
    _op("history", "GET", NS + "/facts/{id}/history", FactHistory, "read", "recall",
        "The fact's SUPERSEDES chain, oldest first, with who replaced whom and why.",
        tool="get_history"),
    _op("pin", "POST", NS + "/memories/{id}/pin", Fact, "write", "change",
        "Pin a fact (it opens every context block) or unpin it.", PinRequest, **W),
    _op("retract", "POST", NS + "/memories/{id}/retract", Fact, "write", "change",
        "Stop believing a fact that was never true; it stays in the history.",
        ReasonRequest, tool="retract_memory", **W),
    _op("contradict", "POST", NS + "/contradictions", list[Fact], "write", "change",
        "Mark two believed facts as contradicting; both stay believed until resolved.",
        ContradictRequest, tool="mark_contradiction", **W),
    _op("resolve", "POST", NS + "/contradictions/resolve", list[Fact], "write", "change",
        "Settle an open contradiction: `keep` supersedes the other.",
        ResolveRequest, tool="resolve_contradiction", **W),
    # --- erasure and review --------------------------------------------------------------------
    _op("forget", "POST", NS + "/forget", ForgetResult, "write", "forget",
        "Erase for good (a privacy request): exactly one of `ids`, `source`, `session`,\n"
        "`everything` (which needs an admin key). A dry run that reports what would go unless\n"
        "`confirm` is true (the Python API erases unless `dry_run`; see\n"
        "\"One behaviour on every surface\" in the reference).",
        ForgetRequest, negated=("dry_run", "confirm"), tool="forget", **W),
    _op("verify", "POST", NS + "/forget/verify", ForgetVerification, "read", "forget",
        "Check that an erased fact or message left no trace in the indexes or the graph.",
        VerifyRequest, call="verify_forgotten"),
    _op("review", "GET", NS + "/review", list[ReviewFlag], "read", "forget",
        "The review flags: facts to look at again because something they rested on changed.",
        ReviewQuery, tool="list_review_flags"),
    _op("confirm", "POST", NS + "/review/{id}/confirm", list[ReviewFlag], "write", "forget",
        "Close a fact's open review flags: it was checked and still holds.",
        ReasonRequest, tool="confirm_review", **W),
    # --- consolidation -------------------------------------------------------------------------
    _op("consolidate", "POST", NS + "/consolidate", ConsolidationResult, "write", "consolidate",
        "A consolidation run: proposed, validated, applied in one transaction, undoable. A dry\n"
        "run that writes nothing unless `confirm` is true (the Python API applies unless\n"
        "`dry_run`; see \"One behaviour on every surface\" in the reference).",
        ConsolidateRequest, negated=("dry_run", "confirm"), tool="consolidate", **W),
    _op("runs", "GET", NS + "/consolidation/runs", list[ConsolidationRunRecord], "read",
        "consolidate",
        "The namespace's consolidation runs, newest first (only those of `ids` when given).",
        RunsQuery, call="consolidation_runs"),
    _op("undo", "POST", NS + "/consolidation/runs/{run_id}/undo", UndoResult, "write",
        "consolidate", "Undo a consolidation run (refused when later changes rest on it).",
        **W),
    # --- audits --------------------------------------------------------------------------------
    _op("beliefs", "GET", NS + "/audit/beliefs", Beliefs, "read", "audit",
        "What was believed at transaction time `as_of` (default now).",
        BeliefsQuery, call="audit.beliefs", tool="list_beliefs"),
    _op("truths", "GET", NS + "/audit/truths", Beliefs, "read", "audit",
        "What was true in the world at `valid_at`, as believed at `as_of` (default now).",
        TruthsQuery, call="audit.truths"),
    _op("diff", "GET", NS + "/audit/diff", Diff, "read", "audit",
        "What changed between two transaction times, and how, by whom and why.",
        DiffQuery, call="audit.diff", tool="what_changed"),
    _op("timeline", "GET", NS + "/audit/timeline/{id}", Timeline, "read", "audit",
        "Everything that happened to a fact, in order, with its actors.",
        call="audit.timeline"),
    _op("contradictions", "GET", NS + "/audit/contradictions", list[ContradictionRecord],
        "read", "audit", "The contradictions, open ones only unless `open_only` is false.",
        ContradictionsQuery, call="audit.contradictions", tool="list_contradictions"),
    _op("explain", "GET", NS + "/audit/explain/{id}", Explanation, "read", "audit",
        "Why a fact is (or is no longer) believed, in words.", call="audit.explain"),
    # --- namespaces ----------------------------------------------------------------------------
    _op("namespaces", "GET", "/v1/namespaces", list[NamespaceSummary], None, "namespaces",
        "The namespaces the key opens that hold something, with their counts."),
    _op("stats", "GET", NS, NamespaceStats, "read", "namespaces", "The namespace's counts.",
        tool="memory_stats"),
    _op("export", "GET", NS + "/export", None, "read", "namespaces",
        "The whole namespace as `graphmem-namespace` JSON lines (what `import` reads).",
        streamed=True),
    _op("import_", "POST", NS + "/import", ImportResult, "admin", "namespaces",
        "Import an export (JSON lines in the body) into this empty namespace, all or nothing.",
        status=201, streamed=True),
    _op("drop", "POST", NS + "/drop", DropResult, "admin", "namespaces",
        "Remove the namespace for good, tombstones too (`confirm` must be true: without it,\n"
        "409 `ConfirmationRequiredError`), or with `dry_run` count what would go.",
        DropRequest, call="drop_namespace"),
)
# fmt: on


@cache
def by_name(name: str) -> Operation:
    """The operation of a REST operation id or a library method (``audit.beliefs``)."""
    for op in OPERATIONS:
        if name in (op.name, op.call):
            return op
    raise KeyError(name)


@cache
def by_tool(tool: str) -> Operation:
    """The operation an MCP tool exposes."""
    for op in OPERATIONS:
        if op.tool == tool:
            return op
    raise KeyError(tool)


def of_request(http: str, path: str) -> Operation | None:
    """The operation a request (its method and path) is, if any."""
    for op in OPERATIONS:
        if op.matches(http, path):
            return op
    return None


__all__ = ["NS", "OPERATIONS", "Operation", "by_name", "by_tool", "of_request"]
