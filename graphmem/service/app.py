"""The service as one ASGI application: the REST API (FastAPI, its OpenAPI schema at
``/openapi.json`` and interactive docs at ``/docs``), MCP over streamable HTTP at ``/mcp``,
``/health`` and ``/ready``, behind request limits (body size, time) and API keys."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, MutableMapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from starlette.exceptions import HTTPException

from graphmem import __version__
from graphmem.client.aio import AsyncMemory
from graphmem.client.base import deadline as transaction_deadline
from graphmem.edge.asgi import Receive, Scope, Send, respond, respond_error
from graphmem.edge.bookmarks import Causality
from graphmem.edge.hosts import EdgePolicy, HostOriginCheck
from graphmem.edge.keys import KeyCheck, KeyGate
from graphmem.embed.embedder import load_model
from graphmem.errors import (
    GraphmemError,
    InvalidInputError,
    RequestTooLargeError,
    TransactionTimeoutError,
)
from graphmem.mcp.options import ALL_TOOLS, McpOptions
from graphmem.mcp.server import build_server
from graphmem.models.wire import error_body, error_reply, status_of
from graphmem.ops.table import of_request
from graphmem.service import failures, keyinfo, routes
from graphmem.service.docs_pages import add_docs
from graphmem.service.metrics import MetricsMode
from graphmem.service.observe import observed
from graphmem.service.outage import Availability, Outage
from graphmem.service.ui_pages import UI, add_ui

logger = logging.getLogger("graphmem.serve")
ASGIApp = Any


@dataclass(frozen=True)
class ServeOptions:
    """What an operator decides when starting ``graphmem serve``."""

    #: The Host and Origin values MCP requests may carry (DNS rebinding).
    edge: EdgePolicy
    #: The namespace an MCP call that names none uses (when its key opens it).
    namespace: str = "default"
    #: Seconds a checked API key is remembered (0: checked on every request).
    key_cache_seconds: float = 5.0
    #: The largest request body, in bytes; and the largest namespace import (admin only).
    max_body_bytes: int = 8 * 1024 * 1024
    max_import_bytes: int = 512 * 1024 * 1024
    #: Seconds a reading REST request may take before it is cancelled and answered 504.
    request_timeout: float = 60.0
    #: The MCP tools served (every tool by default; each call is checked against its key).
    tools: tuple[str, ...] = field(default=ALL_TOOLS)
    max_result_chars: int = 16_000
    #: Who is answered at /metrics: loopback clients and admin keys (on), everyone, or no one.
    metrics: MetricsMode = "on"


def build_app(memory: AsyncMemory, options: ServeOptions) -> ASGIApp:
    """The whole service for this client and these options."""
    mcp = build_server(
        memory,
        McpOptions(
            namespace=options.namespace,
            tools=options.tools,
            max_chars=options.max_result_chars,
            keyed=True,
            bounded=False,
        ),
    )
    keys = KeyCheck(memory, cache_seconds=options.key_cache_seconds)
    availability = Availability()
    # The SDK's own Host check knows only loopback names: HostOriginCheck below does it instead.
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Warm before the first request: the connection, the schema check and the model.
        await memory.connect()
        await asyncio.to_thread(load_model, memory.embedder)
        await availability.start(memory.graph.target)
        app.state.ready = True
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            app.state.ready = False
            await availability.stop()
            await memory.close()

    api = rest_api(memory, lifespan, availability)
    # While Neo4j is down, keyed requests are answered 503 before their key is checked.
    # Behind the key gate: each request's Graphmem-Bookmark, followed and answered.
    mcp_gate = HostOriginCheck(
        Outage(KeyGate(Causality(mcp_app), keys), availability), options.edge
    )
    keyed_api = Outage(KeyGate(Causality(api), keys), availability, _timed)
    # Outermost: every answer, the limits' and the gates' too, carries its request id.
    return observed(Limits(Dispatch(api, keyed_api, mcp_gate), options), options.metrics, keys)


def rest_api(
    memory: AsyncMemory,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]] | None = None,
    availability: Availability | None = None,
) -> FastAPI:
    """The REST API alone: the ``/v1`` routes with their error answers, ``/health`` and
    ``/ready``. Its ``openapi()`` is the service's OpenAPI schema; building it connects to
    nothing (``tools/docs.py`` writes the schema into the docs from it)."""
    api = FastAPI(
        title="graphmem",
        version=__version__,
        summary="Memory for AI agents on Neo4j: append-only facts, typed updates and "
        "contradictions, hybrid recall, audits.",
        lifespan=lifespan,
        # Operation ids are the routes' names (remember, recall, ...): what generated
        # clients call their methods.
        generate_unique_id_function=lambda route: route.name,
        # /docs is served with graphmem's own copy of Swagger UI (docs_pages), not from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    api.state.memory, api.state.ready = memory, False
    api.state.availability = availability or Availability()
    api.include_router(routes.router)
    _add_handlers(api)
    add_docs(api, home=UI + "/")
    add_ui(api)
    return api


def _add_handlers(api: FastAPI) -> None:
    api.include_router(keyinfo.router)

    @api.exception_handler(GraphmemError)
    async def graphmem_error(request: Request, exc: GraphmemError) -> JSONResponse:
        message = None
        if status_of(exc) >= 500:
            # The server's own failure: its detail (database codes, addresses) goes to the
            # log, the caller learns what failed and where to look.
            logger.error(
                "%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc
            )
            message = f"the server could not complete {request.url.path} (see its log)"
        status, body, headers = error_reply(exc, message)
        return JSONResponse(body, status_code=status, headers=headers)

    @api.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return failures.invalid_request(exc)

    # No route, a method the route does not take, and anything unexpected: graphmem's format.
    @api.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return failures.http_error(request, exc)

    @api.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return failures.unexpected(request, exc)

    @api.get("/health", tags=["service"])
    async def health() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok", "version": __version__}

    @api.get("/ready", tags=["service"])
    async def ready(request: Request) -> JSONResponse:
        """Readiness: warmed up, and Neo4j answers."""
        availability: Availability = request.app.state.availability
        if request.app.state.ready:
            reason = await availability.check() if availability.up else "Neo4j is down"
            if reason is None:
                return JSONResponse({"status": "ready"})
            logger.warning("not ready: %s", reason)
            return JSONResponse({"status": "unavailable"}, 503, {"Retry-After": "1"})
        return JSONResponse({"status": "starting"}, 503)


class Dispatch:
    """``/mcp`` to the MCP app and ``/v1/`` to the REST app, each behind its key gate;
    everything else (probes, the schema and docs, the lifespan) to the REST app."""

    def __init__(self, api: ASGIApp, keyed_api: ASGIApp, mcp: ASGIApp) -> None:
        self.api, self.keyed_api, self.mcp = api, keyed_api, mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http":
            await self.api(scope, receive, send)
        elif path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp(scope, receive, send)
        elif path.startswith("/v1/"):
            await self.keyed_api(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def _timed(method: str, path: str) -> bool:
    """Whether a request is held to the request timeout: an operation the table marks
    :attr:`~graphmem.ops.table.Operation.timed` (it only reads); a GET of no operation too."""
    if not path.startswith("/v1/"):
        return False
    op = of_request(method, path)
    return op.timed if op is not None else method == "GET"


class Limits:
    """ASGI: a request that names both a Content-Length and a Transfer-Encoding is answered
    400 and its connection closed; a request body larger than the options allow is answered
    413 (by its Content-Length before it is read, or as soon as it grows past, the route then
    seeing the client gone); a reading REST request that takes longer than ``timeout`` seconds is
    cancelled and answered 504."""

    def __init__(self, app: ASGIApp, options: ServeOptions) -> None:
        self.app, self.timeout = app, options.request_timeout
        self.max_body, self.max_import = options.max_body_bytes, options.max_import_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = self.max_import if path.endswith("/import") else self.max_body
        headers = scope.get("headers", [])
        if _framed_twice(headers):
            # Two framings: a proxy in front may read the body by the other one, so what
            # follows could be taken for another request. Refused, and the connection closed.
            await respond(send, 400, _FRAMED_TWICE, {"connection": "close"})
            return
        length = dict(headers).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await respond_error(send, self._too_large(limit))
            return
        seen, started, refused = 0, False, False

        async def limited_receive() -> MutableMapping[str, Any]:
            nonlocal seen, started, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                refused = True
                if not started:
                    started = True
                    await respond_error(send, self._too_large(limit))
                return {"type": "http.disconnect"}
            return message

        async def watched_send(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            if refused:
                return  # the 413 has been sent: what the route answers goes nowhere
            started = started or message["type"] == "http.response.start"
            await send(message)

        if not _timed(scope.get("method", ""), path):
            await self.app(scope, limited_receive, watched_send)
            return
        try:
            async with asyncio.timeout(self.timeout) as deadline:
                with transaction_deadline(self.timeout):
                    await self.app(scope, limited_receive, watched_send)
        except TimeoutError:
            if not deadline.expired():
                raise
            if not started:
                error = TransactionTimeoutError(
                    f"the request took longer than {self.timeout:g} s (the server's "
                    "--timeout) and was stopped; it only reads, so nothing was written"
                )
                await respond_error(send, error)

    @staticmethod
    def _too_large(limit: int) -> RequestTooLargeError:
        return RequestTooLargeError(
            f"the request body is larger than {limit:,} bytes (the server's --max-body-mb, "
            "or --max-import-mb for an import): send less in one request",
            limit=limit,
        )


def _framed_twice(headers: Any) -> bool:
    """Whether a request names both a ``Content-Length`` and a ``Transfer-Encoding``."""
    names = {bytes(name).lower() for name, _ in headers}
    return b"content-length" in names and b"transfer-encoding" in names


_FRAMED_TWICE = error_body(
    InvalidInputError(
        "the request has both Content-Length and Transfer-Encoding headers; send one of them"
    )
)


__all__ = ["Dispatch", "Limits", "ServeOptions", "build_app", "rest_api"]
