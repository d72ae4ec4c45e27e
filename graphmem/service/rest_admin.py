"""The REST API's other flows: erasure and its verification, review flags, consolidation and
undo, the audits, and the namespaces (listing, stats, export, import, drop)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse

from graphmem.errors import PermissionDeniedError
from graphmem.models import NamespaceStats
from graphmem.models.audit import Beliefs, ContradictionRecord, Diff, Explanation, Timeline
from graphmem.models.consolidation import ConsolidationResult, ConsolidationRunRecord, UndoResult
from graphmem.models.erasure import ForgetResult, ForgetVerification, ReviewFlag
from graphmem.models.namespaces import DropResult, ImportResult, NamespaceSummary
from graphmem.models.requests import (
    ConsolidateRequest,
    DropRequest,
    ForgetRequest,
    ReasonRequest,
    VerifyRequest,
)
from graphmem.models.wire import ERROR_RESPONSES
from graphmem.service.deps import AdminKey, AnyKey, Memory, NsPath, ReadKey, WriteKey, answer
from graphmem.service.import_body import streamed_records
from graphmem.service.requests import IDEMPOTENT, once

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)
Limit = Annotated[int, Query(ge=1, le=1000)]
PREFIX = "/namespaces/{ns}"
#: An export in the OpenAPI schema: `graphmem-namespace` records, one JSON object a line.
JSON_LINES = {"type": "string", "description": "graphmem-namespace JSON lines"}


@router.post(
    PREFIX + "/forget", response_model=ForgetResult, tags=["forget"], dependencies=[IDEMPOTENT]
)
async def forget(
    ns: NsPath, body: ForgetRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Erase for good (a privacy request): exactly one of `ids`, `source`, `session`,
    `everything` (which needs an admin key). A dry run that reports what would go unless
    `confirm` is true."""
    if body.everything and not key.allows("admin"):
        raise PermissionDeniedError(
            f"the API key {key.name!r} has the role {key.role!r}; erasing a whole namespace "
            "(everything) needs 'admin'"
        )
    options = body.model_dump(exclude_unset=True, exclude={"reason", "ids", "confirm"})

    async def call() -> ForgetResult:
        return await memory.forget(
            body.ids, reason=body.reason, ns=ns, dry_run=not body.confirm, **options
        )

    return await once(request, ns, body, call)


@router.post(PREFIX + "/forget/verify", response_model=ForgetVerification, tags=["forget"])
async def verify(ns: NsPath, body: VerifyRequest, key: ReadKey, memory: Memory) -> Response:
    """Check that an erased fact or message left no trace in the indexes or the graph."""
    return answer(await memory.verify_forgotten(body.target, text=body.text, ns=ns))


@router.get(PREFIX + "/review", response_model=list[ReviewFlag], tags=["forget"])
async def review(
    ns: NsPath,
    key: ReadKey,
    memory: Memory,
    fact_id: str | None = None,
    open_only: bool = True,
    limit: Limit = 100,
) -> Response:
    """The review flags: facts to look at again because something they rested on changed."""
    flags = await memory.review(fact_id=fact_id, open_only=open_only, limit=limit, ns=ns)
    return answer(flags)


@router.post(
    PREFIX + "/review/{id}/confirm",
    response_model=list[ReviewFlag],
    tags=["forget"],
    dependencies=[IDEMPOTENT],
)
async def confirm(
    ns: NsPath, id: str, body: ReasonRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Close a fact's open review flags: it was checked and still holds."""
    return await once(request, ns, body, lambda: memory.confirm(id, reason=body.reason, ns=ns))


@router.post(
    PREFIX + "/consolidate",
    response_model=ConsolidationResult,
    tags=["consolidate"],
    dependencies=[IDEMPOTENT],
)
async def consolidate(
    ns: NsPath, body: ConsolidateRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """A consolidation run: proposed, validated, applied in one transaction, undoable. A dry
    run that writes nothing unless `confirm` is true."""

    async def call() -> ConsolidationResult:
        return await memory.consolidate(
            ns=ns,
            force=body.force,
            dry_run=not body.confirm,
            tiers=body.tiers,
            summaries=body.summaries,
        )

    return await once(request, ns, body, call)


@router.get(
    PREFIX + "/consolidation/runs",
    response_model=list[ConsolidationRunRecord],
    tags=["consolidate"],
)
async def runs(
    ns: NsPath,
    key: ReadKey,
    memory: Memory,
    limit: Limit = 20,
    ids: Annotated[list[str] | None, Query()] = None,
) -> Response:
    """The namespace's consolidation runs, newest first (only those of `ids` when given)."""
    return answer(await memory.consolidation_runs(ns=ns, ids=ids, limit=limit))


@router.post(
    PREFIX + "/consolidation/runs/{run_id}/undo",
    response_model=UndoResult,
    tags=["consolidate"],
    dependencies=[IDEMPOTENT],
)
async def undo(
    ns: NsPath, run_id: str, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Undo a consolidation run (refused when later changes rest on it)."""
    return await once(request, ns, None, lambda: memory.undo(run_id, ns=ns))


# --- audits ---------------------------------------------------------------------------------
@router.get(PREFIX + "/audit/beliefs", response_model=Beliefs, tags=["audit"])
async def beliefs(
    ns: NsPath,
    key: ReadKey,
    memory: Memory,
    as_of: str | None = None,
    query: str | None = None,
    limit: Limit = 100,
) -> Response:
    """What was believed at transaction time `as_of` (default now)."""
    return answer(await memory.audit.beliefs(as_of, query=query, limit=limit, ns=ns))


@router.get(PREFIX + "/audit/truths", response_model=Beliefs, tags=["audit"])
async def truths(
    ns: NsPath,
    key: ReadKey,
    memory: Memory,
    valid_at: str,
    as_of: str | None = None,
    query: str | None = None,
    limit: Limit = 100,
) -> Response:
    """What was true in the world at `valid_at`, as believed at `as_of` (default now)."""
    found = await memory.audit.truths(valid_at, as_of=as_of, query=query, limit=limit, ns=ns)
    return answer(found)


@router.get(PREFIX + "/audit/diff", response_model=Diff, tags=["audit"])
async def diff(
    ns: NsPath, key: ReadKey, memory: Memory, since: str, until: str | None = None
) -> Response:
    """What changed between two transaction times, and how, by whom and why."""
    return answer(await memory.audit.diff(since, until, ns=ns))


@router.get(PREFIX + "/audit/timeline/{id}", response_model=Timeline, tags=["audit"])
async def timeline(ns: NsPath, id: str, key: ReadKey, memory: Memory) -> Response:
    """Everything that happened to a fact, in order, with its actors."""
    return answer(await memory.audit.timeline(id, ns=ns))


@router.get(
    PREFIX + "/audit/contradictions", response_model=list[ContradictionRecord], tags=["audit"]
)
async def contradictions(
    ns: NsPath, key: ReadKey, memory: Memory, open_only: bool = True, limit: Limit = 100
) -> Response:
    """The contradictions, open ones only unless `open_only` is false."""
    found = await memory.audit.contradictions(open_only=open_only, limit=limit, ns=ns)
    return answer(found)


@router.get(PREFIX + "/audit/explain/{id}", response_model=Explanation, tags=["audit"])
async def explain(ns: NsPath, id: str, key: ReadKey, memory: Memory) -> Response:
    """Why a fact is (or is no longer) believed, in words."""
    return answer(await memory.audit.explain(id, ns=ns))


# --- namespaces -----------------------------------------------------------------------------
@router.get("/namespaces", response_model=list[NamespaceSummary], tags=["namespaces"])
async def namespaces(key: AnyKey, memory: Memory) -> Response:
    """The namespaces the key opens that hold something, with their counts."""
    return answer([n for n in await memory.namespaces() if key.opens(n.ns)])


@router.get(PREFIX, response_model=NamespaceStats, tags=["namespaces"])
async def stats(ns: NsPath, key: ReadKey, memory: Memory) -> Response:
    """The namespace's counts."""
    return answer(await memory.stats(ns=ns))


@router.get(
    PREFIX + "/export",
    tags=["namespaces"],
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {"schema": JSON_LINES}}}},
)
async def export(ns: NsPath, key: ReadKey, memory: Memory) -> StreamingResponse:
    """The whole namespace as `graphmem-namespace` JSON lines (what `import` reads)."""
    records = await memory.export(ns)

    async def lines() -> AsyncIterator[bytes]:
        async for record in records:
            yield (json.dumps(record, ensure_ascii=False) + "\n").encode()

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@router.post(
    PREFIX + "/import",
    response_model=ImportResult,
    status_code=201,
    tags=["namespaces"],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-ndjson": {"schema": JSON_LINES}},
        }
    },
)
async def import_(ns: NsPath, request: Request, key: AdminKey, memory: Memory) -> Response:
    """Import an export (JSON lines in the body) into this empty namespace, all or nothing."""
    async with streamed_records(request.stream()) as records:
        return answer(await memory.import_(records, ns=ns), 201)


@router.post(PREFIX + "/drop", response_model=DropResult, tags=["namespaces"])
async def drop(ns: NsPath, body: DropRequest, key: AdminKey, memory: Memory) -> Response:
    """Remove the namespace for good, tombstones too (`confirm` must be true), or with
    `dry_run` count what would go."""
    return answer(await memory.drop_namespace(ns, confirm=body.confirm, dry_run=body.dry_run))
