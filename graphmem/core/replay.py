"""Writes that a retry finds already made: ids derived from a request's idempotency key, and
transaction work that, run again, returns what its first run wrote instead of writing it twice.

Two retries meet a write whose commit went through but whose answer was lost:

- the driver's: Neo4j's driver runs a transaction function again when the connection fails
  around the commit. The work's own ids (made once, before the transaction) may then already be
  in the graph; :func:`replaying` makes every run after the first look for them first, and a
  run that finds them returns them (same ids, same content) rather than fail on the uniqueness
  constraint.
- the caller's: ``graphmem serve`` runs a request that carries an ``Idempotency-Key`` inside
  :func:`request_ids`, so that the ids :func:`new_id` makes are derived from the key (the n-th
  id of the request, every time). A retried request then makes the same ids, and its write
  finds them stored, under a lock on the key that a concurrent retry waits for.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from graphmem.core.plans import Plan, Run, Transaction, Work, single
from graphmem.store.cypher import query

T = TypeVar("T")

#: The uuid namespace of the ids derived from idempotency keys.
_ID_SPACE = uuid.UUID("6f1d3c2e-5b7a-4c1e-9a0d-2b8e4f6a1c37")


@dataclass
class RequestIds:
    """The request a write belongs to: its namespace, its idempotency key, and the count of
    ids made for it so far."""

    ns: str
    key: str
    counter: Iterator[int] = field(default_factory=itertools.count, repr=False)

    @property
    def lock_key(self) -> str:
        """The key of the lock node (``:GraphmemLock:GraphmemRequest``) that holds the
        request's record and serialises its retries."""
        return request_lock_key(self.ns, self.key)


_REQUEST: ContextVar[RequestIds | None] = ContextVar("graphmem_request", default=None)


def request_lock_key(ns: str, key: str) -> str:
    return f"request:{ns}:{key}"


@contextmanager
def request_ids(ns: str, key: str) -> Iterator[RequestIds]:
    """Inside the block (this task or thread), :func:`new_id` derives its ids from ``key``."""
    request = RequestIds(ns, key)
    token = _REQUEST.set(request)
    try:
        yield request
    finally:
        _REQUEST.reset(token)


def current_request() -> RequestIds | None:
    """The request the writes made here belong to, if any."""
    return _REQUEST.get()


def new_id() -> str:
    """A new node id: random, or inside :func:`request_ids` the next id derived from the key."""
    request = _REQUEST.get()
    if request is None:
        return str(uuid.uuid4())
    return str(uuid.uuid5(_ID_SPACE, f"{request.ns}\x00{request.key}\x00{next(request.counter)}"))


def replaying(
    work: Callable[[], Work[T]],
    found: Callable[[], Work[T | None]],
    request: RequestIds | None = None,
) -> Callable[[], Work[T]]:
    """``work`` made safe to run again: each run after the first (the driver's retry), and
    every run of a ``request`` (one keyed by an idempotency key, whose first run may have been
    another request's), runs ``found`` first, which answers what the earlier run wrote when its
    ids are in the graph (None: they are not). A request's run first takes the lock of its key,
    so that a concurrent retry waits for the first to end and then finds its ids."""
    runs = 0

    def run() -> Work[T]:
        nonlocal runs
        runs += 1
        if request is not None:
            yield Run(query("ns_lock"), {"key": request.lock_key, "ns": request.ns})
        if runs > 1 or request is not None:
            written = yield from found()
            if written is not None:
                return written
        return (yield from work())

    return run


@dataclass(frozen=True)
class Recorded:
    """The first answer of a write request, kept under its idempotency key: the request's
    route and body hash (what the key was first used for), and the HTTP status and JSON body
    it was answered with, recorded ``at``."""

    route: str
    body_hash: str
    status: int
    result: str
    at: datetime


def _recorded(rows: list[dict[str, Any]], before: datetime) -> Recorded | None:
    if not rows or rows[0]["result"] is None or rows[0]["at"] is None:
        return None
    row = rows[0]
    at = row["at"].to_native() if hasattr(row["at"], "to_native") else row["at"]
    if at < before:
        return None  # kept past its time: as if it were gone
    return Recorded(row["route"], row["body_hash"], int(row["status"]), row["result"], at)


def recorded_answer(ns: str, key: str, before: datetime) -> Plan[Recorded | None]:
    """The answer recorded for request ``key`` of ``ns`` after ``before``, if any."""
    params = {"ns": ns, "key": request_lock_key(ns, key)}
    rows = yield Transaction("read", lambda: single(Run(query("request_get"), params)))
    return _recorded(rows, before)


def record_answer(ns: str, key: str, answer: Recorded, before: datetime) -> Plan[Recorded]:
    """Records ``answer`` for request ``key`` of ``ns`` unless one recorded after ``before``
    is there: the answer kept (the first)."""
    params = {
        "ns": ns,
        "key": request_lock_key(ns, key),
        "route": answer.route,
        "body_hash": answer.body_hash,
        "status": answer.status,
        "result": answer.result,
        "before": before,
    }
    rows = yield Transaction("write", lambda: single(Run(query("request_record"), params)))
    kept = _recorded(rows, before)
    return answer if kept is None else kept


def prune_answers(ns: str, before: datetime, limit: int = 1000) -> Plan[int]:
    """Deletes up to ``limit`` request records (and request locks) of ``ns`` last used before
    ``before``: how many."""
    params = {"ns": ns, "prefix": request_lock_key(ns, ""), "before": before, "limit": limit}
    rows = yield Transaction("write", lambda: single(Run(query("request_prune"), params)))
    return int(rows[0]["deleted"]) if rows else 0


__all__ = [
    "Recorded",
    "RequestIds",
    "current_request",
    "new_id",
    "prune_answers",
    "record_answer",
    "recorded_answer",
    "replaying",
    "request_ids",
    "request_lock_key",
]
