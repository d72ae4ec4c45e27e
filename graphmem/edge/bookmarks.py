"""Read-your-writes across serve processes: the ``Graphmem-Bookmark`` header
(:mod:`graphmem.models.bookmarks`) at the HTTP edge.

A request that carries the header has every transaction the server runs for it wait until
the database has the write the bookmark names; a malformed one is answered 422 before
anything runs. The answer of a REST write carries the bookmarks of its last transaction in
the same header; an MCP write tool's result carries them as ``bookmark``, the MCP server
(:mod:`graphmem.mcp.server`) reading the request's bookmarks from :data:`SCOPE_CAUSAL`.
"""

from __future__ import annotations

from typing import Any

from graphmem.edge.asgi import ASGIApp, Receive, Scope, Send, respond_error
from graphmem.errors import InvalidInputError
from graphmem.models.bookmarks import HEADER, decode, encode
from graphmem.ops.table import of_request
from graphmem.store.bookmarks import Causal, following

#: Where a request's :class:`Causal` is kept in its ASGI scope (for the MCP server).
SCOPE_CAUSAL = "graphmem.causal"
_NAME = HEADER.lower().encode()


class Causality:
    """ASGI: each HTTP request's bookmarks followed by the client's transactions, and a REST
    write's answer given the bookmarks of its last transaction."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            given = _given(scope.get("headers", []))
        except InvalidInputError as exc:
            await respond_error(send, exc)
            return
        op = of_request(scope.get("method", ""), scope.get("path", ""))
        causal = scope[SCOPE_CAUSAL] = Causal(given, report=op is not None and op.writes)

        async def answering(message: Any) -> None:
            marks = causal.answered()
            if message["type"] == "http.response.start" and marks:
                headers = [*message.get("headers", []), (_NAME, encode(marks).encode())]
                message = {**message, "headers": headers}
            await send(message)

        with following(causal):
            await self.app(scope, receive, answering)


def _given(headers: Any) -> tuple[str, ...]:
    values = [bytes(value) for name, value in headers if bytes(name).lower() == _NAME]
    if not values:
        return ()
    if len(values) > 1:
        raise InvalidInputError(f"the request has {len(values)} {HEADER} headers; send one")
    return decode(values[0].decode("latin-1"))


def request_causal(scope: Any) -> Causal | None:
    """The bookmarks of the HTTP request in ``scope``, when :class:`Causality` read them."""
    causal = scope.get(SCOPE_CAUSAL) if isinstance(scope, dict) else None
    return causal if isinstance(causal, Causal) else None


__all__ = ["SCOPE_CAUSAL", "Causality", "request_causal"]
