"""The REST API's memory flows under ``/v1/namespaces/{ns}``: remember, ingest, search,
context, get, history, pin, retract and contradictions. Each route is one call of the server's
:class:`~graphmem.client.AsyncMemory`, its body one of :mod:`graphmem.models.requests` and its
answer the model the library returns; the OpenAPI schema is generated from both."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from graphmem.models import ContextBlock, Episode, Fact, FactHistory, IngestResult, RecallResult
from graphmem.models.bounds import check_items
from graphmem.models.keys import ApiKey
from graphmem.models.requests import (
    ContextRequest,
    ContradictRequest,
    IngestRequest,
    PinRequest,
    ReasonRequest,
    RecallRequest,
    RememberManyRequest,
    RememberRequest,
    ResolveRequest,
)
from graphmem.models.wire import ERROR_RESPONSES
from graphmem.service.deps import Memory, NsPath, ReadKey, WriteKey, answer
from graphmem.service.requests import IDEMPOTENT, once


def _reader(body: RecallRequest, key: ApiKey) -> dict[str, Any]:
    """The options of a search; a read key's searches count no access (it writes nothing)."""
    options = body.options()
    if not key.allows("write"):
        options["track_access"] = False
    return options


router = APIRouter(prefix="/v1/namespaces/{ns}", responses=ERROR_RESPONSES)


@router.post(
    "/facts", response_model=Fact, status_code=201, tags=["remember"], dependencies=[IDEMPOTENT]
)
async def remember(
    ns: NsPath, body: RememberRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Remember one fact; `supersedes`, `contradicts` and `references` link it to others."""
    fields = body.model_dump(exclude_unset=True, exclude={"text", "allow_forgotten"})

    async def call() -> Fact:
        return await memory.remember(
            body.text, ns=ns, allow_forgotten=body.allow_forgotten, **fields
        )

    return await once(request, ns, body, call, status=201, derive_ids=True)


@router.post(
    "/facts/batch",
    response_model=list[Fact],
    status_code=201,
    tags=["remember"],
    dependencies=[IDEMPOTENT],
)
async def remember_many(
    ns: NsPath, body: RememberManyRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Remember several facts in one transaction: all of them or none (at most 1,000 facts
    and 4 MB of text a call: 413 beyond)."""
    check_items(body.facts, "text")

    async def call() -> list[Fact]:
        return await memory.remember_many(body.facts, ns=ns, allow_forgotten=body.allow_forgotten)

    return await once(request, ns, body, call, status=201, derive_ids=True)


@router.post(
    "/messages",
    response_model=IngestResult,
    status_code=201,
    tags=["remember"],
    dependencies=[IDEMPOTENT],
)
async def ingest(
    ns: NsPath, body: IngestRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Store conversation messages verbatim, each once (and the facts an extractor finds);
    at most 1,000 messages and 4 MB of text a call (413 beyond)."""
    check_items(body.messages, "content")

    async def call() -> IngestResult:
        return await memory.ingest(
            body.messages,
            ns=ns,
            session_id=body.session_id,
            batch_size=body.batch_size,
            extract=body.extract,
            allow_forgotten=body.allow_forgotten,
        )

    return await once(request, ns, body, call, status=201, derive_ids=True)


@router.post("/search", response_model=RecallResult, tags=["recall"])
async def recall(ns: NsPath, body: RecallRequest, key: ReadKey, memory: Memory) -> Response:
    """Hybrid recall: what is believed now (or `as_of` a transaction time, `valid_at` a
    valid time), ranked."""
    return answer(await memory.recall(body.query, ns=ns, **_reader(body, key)))


@router.post("/context", response_model=ContextBlock, tags=["recall"])
async def context(ns: NsPath, body: ContextRequest, key: ReadKey, memory: Memory) -> Response:
    """A prompt-ready block within `budget_tokens`: pinned facts, then the best hits."""
    block = await memory.context(
        body.query, ns=ns, budget_tokens=body.budget_tokens, **_reader(body, key)
    )
    return answer(block)


@router.get("/memories/{id}", response_model=Fact | Episode, tags=["recall"])
async def get(ns: NsPath, id: str, key: ReadKey, memory: Memory) -> Response:
    """One fact or message by id (or a unique 8+ character prefix)."""
    return answer(await memory.get(id, ns=ns))


@router.get("/facts/{id}/history", response_model=FactHistory, tags=["recall"])
async def history(ns: NsPath, id: str, key: ReadKey, memory: Memory) -> Response:
    """The fact's SUPERSEDES chain, oldest first, with who replaced whom and why."""
    return answer(await memory.history(id, ns=ns))


@router.post("/memories/{id}/pin", response_model=Fact, tags=["change"], dependencies=[IDEMPOTENT])
async def pin(
    ns: NsPath, id: str, body: PinRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Pin a fact (it opens every context block) or unpin it."""
    return await once(request, ns, body, lambda: memory.pin(id, ns=ns, pinned=body.pinned))


@router.post(
    "/memories/{id}/retract", response_model=Fact, tags=["change"], dependencies=[IDEMPOTENT]
)
async def retract(
    ns: NsPath, id: str, body: ReasonRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Stop believing a fact that was never true; it stays in the history."""
    return await once(request, ns, body, lambda: memory.retract(id, reason=body.reason, ns=ns))


@router.post(
    "/contradictions", response_model=list[Fact], tags=["change"], dependencies=[IDEMPOTENT]
)
async def contradict(
    ns: NsPath, body: ContradictRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Mark two believed facts as contradicting; both stay believed until resolved."""

    async def call() -> list[Fact]:
        return await memory.contradict(body.a, body.b, reason=body.reason, ns=ns)

    return await once(request, ns, body, call)


@router.post(
    "/contradictions/resolve", response_model=list[Fact], tags=["change"], dependencies=[IDEMPOTENT]
)
async def resolve(
    ns: NsPath, body: ResolveRequest, key: WriteKey, memory: Memory, request: Request
) -> Response:
    """Settle an open contradiction: `keep` supersedes the other."""

    async def call() -> list[Fact]:
        return await memory.resolve(body.a, body.b, keep=body.keep, reason=body.reason, ns=ns)

    return await once(request, ns, body, call)
