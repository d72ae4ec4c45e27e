"""Write requests answered once: the ``Idempotency-Key`` header.

A write request that carries ``Idempotency-Key: <key>`` (1 to 200 visible ASCII characters; the
remote clients send a new uuid per call, and the same one on each retry of that call) is
answered once and recorded in the graph with that answer, under the request's namespace and
key: a node ``:GraphmemLock:GraphmemRequest`` keyed ``request:<ns>:<key>`` holding the route,
a hash of the body, the status and the JSON answer. A retry with the same key and body within
:data:`RETENTION` gets the recorded answer (the same status and bytes, with
``Idempotency-Replayed: true``) from any serve process on the same Neo4j, after a restart
too; the same key with another route or body is refused (409, IdempotencyConflictError).

A retry that comes before the first answer was recorded (the first is still running, or its
process stopped between the commit and the record) runs the write again: remember, the batch
and ingest then derive their new ids from the key (:func:`~graphmem.core.replay.request_ids`),
so the write finds its own nodes stored and answers them instead of storing them twice. On
one process, requests with the same namespace and key run one at a time, so a retry that
reaches the process still running the first waits for its answer and gets it again (other
writes, such as a retract, would otherwise be refused on the second run as already done).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import Depends, Header, Request, Response
from pydantic import BaseModel

from graphmem.client.aio import AsyncMemory
from graphmem.core.replay import (
    Recorded,
    prune_answers,
    record_answer,
    recorded_answer,
    request_ids,
)
from graphmem.errors import GraphmemError, IdempotencyConflictError, InvalidInputError

logger = logging.getLogger("graphmem.serve")

#: The header that carries a write request's idempotency key.
HEADER = "Idempotency-Key"
#: The header that marks an answer given again from the record.
REPLAYED = "Idempotency-Replayed"
#: How long a request's first answer is kept to answer its retries.
RETENTION = timedelta(hours=24)
#: Seconds between two prunings of one namespace's expired records by one process.
PRUNE_EVERY = 600.0
_KEY = re.compile(r"[\x21-\x7e]{1,200}")

Result = BaseModel | Sequence[BaseModel]


async def _declared(
    key: Annotated[
        str | None,
        Header(
            alias=HEADER,
            description="A write's idempotency key (1 to 200 visible ASCII characters, a uuid "
            "say): a retry with the same key and body is answered with the first answer, "
            "kept 24 h; the same key with another body is refused (409).",
        ),
    ] = None,
) -> None:
    """Declares the header in the OpenAPI schema; :func:`once` reads and checks it."""


#: The dependency of the routes answered once per idempotency key (declares the header).
IDEMPOTENT = Depends(_declared)


def _json(result: Result) -> str:
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    return "[" + ",".join(item.model_dump_json() for item in result) + "]"


def _key(request: Request) -> str | None:
    key = request.headers.get(HEADER)
    if key is not None and not _KEY.fullmatch(key):
        raise InvalidInputError(
            f"the {HEADER} header must be 1 to 200 visible ASCII characters (a uuid, say)"
        )
    return key


def _answer(kept: Recorded, route: str, digest: str, *, replayed: bool) -> Response:
    if kept.route != route or kept.body_hash != digest:
        raise IdempotencyConflictError(
            f"the {HEADER} of this request was used before for another request "
            f"({kept.route}, with another body); nothing was done: send a new key"
        )
    headers = {REPLAYED: "true"} if replayed else None
    return Response(kept.result, kept.status, headers, media_type="application/json")


async def once(
    request: Request,
    ns: str,
    body: BaseModel | None,
    call: Callable[[], Awaitable[Result]],
    *,
    status: int = 200,
    derive_ids: bool = False,
) -> Response:
    """The answer of write ``call`` (made with ``body`` for namespace ``ns``), given once per
    idempotency key; without the header, the answer of the call. ``derive_ids``: the call's new
    ids are derived from the key, so that running it again finds what it stored."""
    key = _key(request)
    if key is None:
        return Response(_json(await call()), status, media_type="application/json")
    async with _running(request, ns, key):
        return await _once(request, ns, key, body, call, status, derive_ids)


def _running(request: Request, ns: str, key: str) -> asyncio.Lock:
    """The lock of the requests with this namespace and key on this process (kept while a
    request holds or waits for it)."""
    state = request.app.state
    locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] | None = getattr(
        state, "request_locks", None
    )
    if locks is None:
        locks = state.request_locks = weakref.WeakValueDictionary()
    lock = locks.get((ns, key))
    if lock is None:
        lock = locks[(ns, key)] = asyncio.Lock()
    return lock


async def _once(
    request: Request,
    ns: str,
    key: str,
    body: BaseModel | None,
    call: Callable[[], Awaitable[Result]],
    status: int,
    derive_ids: bool,
) -> Response:
    memory: AsyncMemory = request.app.state.memory
    route = f"{request.method} {request.url.path}"
    data = body.model_dump_json() if body is not None else ""
    digest = hashlib.sha256(f"{route}\n{data}".encode()).hexdigest()
    before = datetime.now(UTC) - RETENTION
    first = await memory._run(recorded_answer(ns, key, before))
    if first is not None:
        return _answer(first, route, digest, replayed=True)
    with request_ids(ns, key) if derive_ids else nullcontext():
        result = _json(await call())
    mine = Recorded(route, digest, status, result, datetime.now(UTC))
    try:
        kept = await memory._run(record_answer(ns, key, mine, before))
        await _prune(request, memory, ns, before)
    except GraphmemError as exc:
        # The write is done: its answer is the truth. A retry runs it again, and the writes
        # whose ids derive from the key find what they stored.
        logger.warning(
            "the answer of %s could not be recorded: %s: %s", route, type(exc).__name__, exc
        )
        return Response(result, status, media_type="application/json")
    return _answer(kept, route, digest, replayed=kept.result != result)


async def _prune(request: Request, memory: AsyncMemory, ns: str, before: datetime) -> None:
    """Deletes the namespace's expired records, at most every :data:`PRUNE_EVERY` seconds
    per process."""
    state = request.app.state
    pruned: dict[str, float] | None = getattr(state, "requests_pruned", None)
    if pruned is None:
        pruned = state.requests_pruned = {}
    now = time.monotonic()
    if now - pruned.get(ns, -PRUNE_EVERY) < PRUNE_EVERY:
        return
    pruned[ns] = now
    await memory._run(prune_answers(ns, before))


__all__ = ["HEADER", "IDEMPOTENT", "REPLAYED", "RETENTION", "once"]
