"""The key check in front of MCP over HTTP and the REST API (``graphmem serve`` and ``graphmem
mcp --transport http``): a request without a good API key is answered 401 before it is read.
Plain ASGI, so that ``graphmem mcp`` needs no web framework."""

from __future__ import annotations

import json
import logging
from typing import Any

from graphmem.errors import AuthenticationError, GraphmemError
from graphmem.mcp.edge import ASGIApp, Receive, Scope, Send
from graphmem.mcp.keys import KeyCheck, bearer
from graphmem.models.wire import error_body, status_of

#: Where a request's checked API key travels in the ASGI scope, to the routes and MCP tools.
SCOPE_KEY = "graphmem.api_key"
logger = logging.getLogger("graphmem.serve")


class KeyGate:
    """ASGI: a request without a good API key is answered 401 before anything reads its body
    and goes no further; one with a good key carries it in its scope (``graphmem.api_key``)
    to the routes and the MCP tools."""

    def __init__(self, app: ASGIApp, keys: KeyCheck) -> None:
        self.app, self.keys = app, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1")
                for k, v in scope.get("headers", [])
            }
            try:
                scope[SCOPE_KEY] = await self.keys.key(bearer(headers))
            except AuthenticationError as exc:
                await respond(send, 401, error_body(exc), {"www-authenticate": "Bearer"})
                return
            except GraphmemError as exc:
                # The database's own words stay in the log: the caller has no key yet.
                logger.error("an API key could not be checked: %s: %s", type(exc).__name__, exc)
                await respond(send, status_of(exc), error_body(exc, "the key could not be checked"))
                return
        await self.app(scope, receive, send)


async def respond(
    send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    """A JSON answer sent straight on ASGI."""
    data = json.dumps(body, ensure_ascii=False).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


__all__ = ["SCOPE_KEY", "KeyGate", "respond"]
