"""Who a change is attributed to: the ``actor`` on the relationships, records and tombstones a
write leaves. A client's own calls are ``api``; ``graphmem serve`` runs each request inside
:func:`acting_as` with the name of the API key that made it, so audits say which agent did
what. The value is per task (a context variable), so concurrent requests keep their own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: Who a write is attributed to when it comes through the client with no actor set.
API_ACTOR = "api"

_ACTOR: ContextVar[str] = ContextVar("graphmem_actor", default=API_ACTOR)


def current_actor() -> str:
    """The actor of the calls made here: :data:`API_ACTOR` unless inside :func:`acting_as`."""
    return _ACTOR.get()


@contextmanager
def acting_as(actor: str) -> Iterator[None]:
    """Attribute the writes made inside the block (in this task or thread) to ``actor``."""
    token = _ACTOR.set(actor)
    try:
        yield
    finally:
        _ACTOR.reset(token)


__all__ = ["API_ACTOR", "acting_as", "current_actor"]
