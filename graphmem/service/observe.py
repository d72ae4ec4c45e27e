"""ASGI, outermost: what each request to the service was, for its operator.

Every HTTP request gets an id (its own ``X-Request-Id`` when that is short and printable, else
a new one), echoed on its answer whichever layer answers it, and carried by every log record
written while it is served. When it ends, one access record (:mod:`graphmem.service.logs`)
says what it was: method, route template (never the path with its ids), MCP method or tool,
namespace, key name (never the secret), status, and the milliseconds it took, of which in
Neo4j, in the embedder and in an LLM. Its metrics are added (:mod:`graphmem.service.metrics`),
and with tracing on it is a span whose children are its embedding, transactions, Cypher
statements and LLM requests (:mod:`graphmem.telemetry`). ``/metrics`` is answered here."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from graphmem import telemetry
from graphmem.edge.asgi import ASGIApp, Receive, Scope, Send, respond_error
from graphmem.edge.keys import SCOPE_KEY, KeyCheck
from graphmem.errors import GraphmemError
from graphmem.ops.table import of_request
from graphmem.service.logs import REQUEST_ID, access_log
from graphmem.service.metrics import MetricsMode, ServiceMetrics, answer_metrics

logger = logging.getLogger("graphmem.serve")

#: A request id a client may give: 1 to 128 printable ASCII characters, no spaces.
_GOOD_ID = re.compile(rb"[\x21-\x7e]{1,128}")
#: The largest MCP request body read for its method and tool's name.
_MCP_PEEK = 64 * 1024
#: What a tool name or namespace may be to be logged as it is.
_NAME = re.compile(r"[\w.:/@-]{1,128}")


def request_id(headers: Any) -> str:
    """The request's ``X-Request-Id`` when it is good, else a new id (32 hex digits)."""
    for name, value in headers:
        if bytes(name).lower() == b"x-request-id" and _GOOD_ID.fullmatch(bytes(value)):
            return bytes(value).decode("ascii")
    return uuid.uuid4().hex


def _mount_of(scope: Scope) -> str | None:
    """The path of the mount that took a request: a mount adds it to the ``root_path`` it
    hands on, and keeps the root path it was given as ``app_root_path``."""
    given = scope.get("app_root_path")
    root = scope.get("root_path", "")
    if not isinstance(given, str) or not isinstance(root, str) or not root.startswith(given):
        return None
    return root[len(given) :] or None


def route_of(scope: Scope) -> str:
    """The route template of a request once served: the route that took it, the operation
    its method and path are (a request refused before routing), ``/mcp``, the path of the
    mount that served it (``/ui``, ``/docs/assets``: its files), or ``unmatched``."""
    if scope.get("path") == "/metrics":
        return "/metrics"
    route = scope.get("route")
    template = getattr(route, "path", None)
    if isinstance(template, str) and template:
        return template
    mount = _mount_of(scope)
    if mount:
        return mount
    path = scope.get("path", "")
    if path == "/mcp" or path.startswith("/mcp/"):
        return "/mcp"
    if path.startswith("/v1/"):
        op = of_request(scope.get("method", ""), path)
        if op is not None:
            return op.path
    return "unmatched"


def namespace_of(scope: Scope) -> str | None:
    """The namespace a REST request names in its path."""
    ns = scope.get("path_params", {}).get("ns")
    if ns is None:
        parts = scope.get("path", "").split("/")
        if len(parts) > 3 and parts[1] == "v1" and parts[2] == "namespaces":
            ns = parts[3]
    return ns if isinstance(ns, str) and _NAME.fullmatch(ns) else None


def mcp_call(body: bytes) -> tuple[str | None, str | None]:
    """An MCP request's method (``tools/call:<tool>`` for a tool call) and the namespace its
    arguments name, when the body is one JSON-RPC request."""
    try:
        message = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None, None
    method: str = message["method"]
    params = message.get("params")
    ns = None
    if method == "tools/call" and isinstance(params, dict):
        method = f"tools/call:{params.get('name')}"
        arguments = params.get("arguments")
        if isinstance(arguments, dict) and isinstance(arguments.get("ns"), str):
            ns = arguments["ns"]
    good = _NAME.fullmatch(method) is not None
    return (method if good else None), (ns if ns and _NAME.fullmatch(ns) else None)


@dataclass
class _Seen:
    """What the layers below showed of one request."""

    status: int = 0
    started: bool = False
    mcp: str | None = None
    ns: str | None = None


class Observe:
    """The outermost layer of the service (see the module's docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        metrics: ServiceMetrics | None = None,
        *,
        mode: MetricsMode = "on",
        keys: KeyCheck | None = None,
    ) -> None:
        self.app, self.metrics, self.mode, self.keys = app, metrics, mode, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        rid = request_id(scope.get("headers", []))
        seen = _Seen()
        echo = (b"x-request-id", rid.encode())

        async def echoed(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                seen.status, seen.started = message["status"], True
                message["headers"] = [*message.get("headers", []), echo]
            await send(message)

        inner: ASGIApp
        if self.metrics is not None and scope.get("path") == "/metrics":
            inner = self._metrics
        else:
            inner = self.app
        if scope.get("path") == "/mcp":
            receive = self._peeking(receive, seen)
        token = REQUEST_ID.set(rid)
        try:
            with (
                telemetry.spending() as spent,
                telemetry.server_span(scope.get("method", ""), _carrier(scope)) as current,
            ):
                try:
                    await inner(scope, receive, echoed)
                except Exception as exc:
                    await self._failed(exc, seen, echoed)
                finally:
                    self._done(scope, rid, seen, time.perf_counter() - began, spent, current)
        finally:
            REQUEST_ID.reset(token)

    async def _metrics(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.metrics is not None
        await answer_metrics(self.metrics, self.mode, self.keys, scope, send)

    @staticmethod
    def _peeking(receive: Receive, seen: _Seen) -> Receive:
        """``receive``, the first body of an MCP request read for its method and namespace
        when it comes whole and small."""
        first = True

        async def peek() -> MutableMapping[str, Any]:
            nonlocal first
            message = await receive()
            if first and message["type"] == "http.request":
                first = False
                body = message.get("body", b"")
                if not message.get("more_body") and len(body) <= _MCP_PEEK:
                    seen.mcp, seen.ns = mcp_call(body)
            return message

        return peek

    @staticmethod
    async def _failed(exc: Exception, seen: _Seen, send: Send) -> None:
        """An exception no layer answered: logged with its traceback, answered 500 when no
        answer has begun. One the application answered with a 5xx was logged there."""
        if seen.started and seen.status >= 500:
            return
        logger.error("unhandled %s: %s", type(exc).__name__, exc, exc_info=exc)
        if seen.started:
            raise exc  # an answer cut short: the server closes its connection
        await respond_error(send, GraphmemError("the server failed to answer (see its log)"))

    def _done(
        self,
        scope: Scope,
        rid: str,
        seen: _Seen,
        seconds: float,
        spent: telemetry.Spent,
        current: Any,
    ) -> None:
        route = route_of(scope)
        method = scope.get("method", "")
        status = seen.status or 500
        key = scope.get(SCOPE_KEY)
        name = getattr(key, "name", None)
        ns = namespace_of(scope) or seen.ns
        if self.metrics is not None:
            self.metrics.observe(route, method, status, seconds, spent)
        if current is not None:
            telemetry.end_server_span(
                current,
                route,
                status,
                **{
                    "http.request.method": method,
                    "graphmem.request_id": rid,
                    "graphmem.namespace": ns,
                    "graphmem.key": name,
                    "graphmem.mcp": seen.mcp,
                },
            )
        level = logging.ERROR if status >= 500 else logging.INFO
        if access_log.isEnabledFor(level):
            fields = {
                "request_id": rid,
                "method": method,
                "route": route,
                "mcp": seen.mcp,
                "ns": ns,
                "key": name,
                "status": status,
                "ms": round(seconds * 1000, 1),
                "db_ms": round(spent.db_ms, 1),
                "embed_ms": round(spent.embed_ms, 1),
                "llm_ms": round(spent.llm_ms, 1) if spent.llm_ms else None,
            }
            access_log.log(level, "%s %s %s", method, route, status, extra={"access": fields})


def observed(app: ASGIApp, mode: MetricsMode, keys: KeyCheck | None) -> Observe:
    """``app`` behind :class:`Observe`, its metrics collected unless ``mode`` is off."""
    metrics = None if mode == "off" else ServiceMetrics(keys)
    return Observe(app, metrics, mode=mode, keys=keys)


def _carrier(scope: Scope) -> dict[str, str]:
    """The request's headers, for a ``traceparent`` (read only with tracing on)."""
    if not telemetry.tracing():
        return {}
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


__all__ = ["Observe", "mcp_call", "namespace_of", "observed", "request_id", "route_of"]
