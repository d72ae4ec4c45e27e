"""ASGI as the edge speaks it: the types of an application, and JSON answers sent straight
on ``send``, a graphmem error with the status, body and headers of
:func:`~graphmem.models.wire.error_reply`."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from graphmem.errors import GraphmemError
from graphmem.models.wire import error_reply

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def respond(
    send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    """A JSON answer sent straight on ASGI."""
    data = json.dumps(body, ensure_ascii=False).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


async def respond_error(
    send: Send,
    error: GraphmemError,
    message: str | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    """``error`` answered as the REST API answers it (``message`` in place of its own words),
    with ``headers`` added."""
    status, body, own = error_reply(error, message)
    await respond(send, status, body, {**own, **(headers or {})})


__all__ = ["ASGIApp", "Receive", "Scope", "Send", "respond", "respond_error"]
