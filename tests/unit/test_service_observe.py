"""What the service tells its operator, without Neo4j: request ids, route templates, the
access record in both formats, the metrics a request adds, who ``/metrics`` answers, the
OTEL_* variables read, and the spans of the telemetry hooks."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from graphmem import telemetry
from graphmem.edge.asgi import Receive, Scope, Send, respond_error
from graphmem.edge.keys import SCOPE_KEY
from graphmem.errors import AuthenticationError
from graphmem.models.keys import ApiKey
from graphmem.service.logs import REQUEST_ID, JsonFormatter, TextFormatter
from graphmem.service.metrics import ServiceMetrics
from graphmem.service.observe import (
    Observe,
    mcp_call,
    namespace_of,
    observed,
    request_id,
    route_of,
)

SECRET = "gm_secret_never_logged"


# --- pure parts -------------------------------------------------------------------------------
def test_a_good_request_id_is_kept_and_a_bad_one_replaced() -> None:
    assert request_id([(b"X-Request-Id", b"abc-123")]) == "abc-123"
    for bad in (b"", b"has space", b"x" * 129, "é".encode(), b"tab\there"):
        made = request_id([(b"x-request-id", bad)])
        assert len(made) == 32 and made != bad.decode("utf-8", "replace")
    assert request_id([]) != request_id([])


def test_the_route_is_a_template_never_the_path() -> None:
    scope = {"method": "POST", "path": "/v1/namespaces/user-42/search"}
    assert route_of(scope) == "/v1/namespaces/{ns}/search"
    scope = {"method": "GET", "path": "/v1/namespaces/n/audit/timeline/f-1"}
    assert route_of(scope) == "/v1/namespaces/{ns}/audit/timeline/{id}"
    assert route_of({"method": "POST", "path": "/mcp"}) == "/mcp"
    assert route_of({"method": "GET", "path": "/secret/thing"}) == "unmatched"
    assert route_of({"method": "GET", "path": "/metrics"}) == "/metrics"

    class Route:
        path = "/health"

    assert route_of({"method": "GET", "path": "/health", "route": Route()}) == "/health"
    # A mount's files (the web UI), behind a proxy's prefix or not: one series for them all.
    mounted = {"path": "/ui/js/app.js", "app_root_path": "/gm", "root_path": "/gm/ui"}
    assert route_of({"method": "GET", **mounted}) == "/ui"


def test_the_namespace_comes_from_the_path_params_or_the_path() -> None:
    assert namespace_of({"path_params": {"ns": "a"}, "path": "/x"}) == "a"
    assert namespace_of({"path": "/v1/namespaces/user-42/recall"}) == "user-42"
    assert namespace_of({"path": "/health"}) is None
    assert namespace_of({"path": "/v1/namespaces/bad ns/recall"}) is None


def test_an_mcp_body_gives_its_method_tool_and_namespace() -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_memories", "arguments": {"query": "q", "ns": "u-1"}},
    }
    assert mcp_call(json.dumps(call).encode()) == ("tools/call:search_memories", "u-1")
    assert mcp_call(b'{"method": "tools/list"}') == ("tools/list", None)
    assert mcp_call(b"[1, 2]") == (None, None)
    assert mcp_call(b"not json") == (None, None)
    assert mcp_call(b'{"method": "x y\\n"}') == (None, None)


def test_the_otel_variables_choose_the_exporters() -> None:
    assert telemetry.trace_exporters({}) == []
    assert telemetry.trace_exporters({"OTEL_TRACES_EXPORTER": "none"}) == []
    assert telemetry.trace_exporters({"OTEL_TRACES_EXPORTER": "otlp,console"}) == [
        "otlp",
        "console",
    ]
    assert telemetry.trace_exporters({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}) == ["otlp"]
    disabled = {"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}
    assert telemetry.trace_exporters(disabled) == []
    assert telemetry.configure_tracing({}) is False and not telemetry.tracing()
    assert telemetry.configure_tracing({"OTEL_TRACES_EXPORTER": "zipkin"}) is False
    assert not telemetry.tracing()
    try:
        assert telemetry.configure_tracing({"OTEL_TRACES_EXPORTER": "console"}) is True
        assert telemetry.tracing()
    finally:
        telemetry.disable_tracing()


def _record(access: dict[str, Any] | None, message: str = "m") -> logging.LogRecord:
    record = logging.LogRecord("graphmem.access", logging.INFO, __file__, 1, message, (), None)
    if access is not None:
        record.access = access
    return record


def test_the_formats_of_a_record() -> None:
    fields = {"request_id": "r1", "method": "GET", "route": "/health", "status": 200, "ms": 1.5}
    line = json.loads(JsonFormatter().format(_record(fields)))
    assert line["request_id"] == "r1" and line["status"] == 200 and line["level"] == "info"
    assert line["time"].endswith("Z")
    text = TextFormatter().format(_record(fields))
    assert "request_id=r1 method=GET route=/health status=200 ms=1.5" in text
    token = REQUEST_ID.set("r2")
    try:
        assert json.loads(JsonFormatter().format(_record(None, "boom")))["request_id"] == "r2"
        assert "[r2] boom" in TextFormatter().format(_record(None, "boom"))
    finally:
        REQUEST_ID.reset(token)


# --- the middleware ---------------------------------------------------------------------------
KEY = ApiKey.model_construct(name="agent-7", role="write", namespaces=("n",))


async def _inner(scope: Scope, receive: Receive, send: Send) -> None:
    """A stand-in for the layers below: a key gate's 401, a route that writes, a failure."""
    path = scope["path"]
    if path == "/v1/namespaces/n/facts" and scope.get("headers"):
        auth = dict(scope["headers"]).get(b"authorization")
        if auth != f"Bearer {SECRET}".encode():
            await respond_error(send, AuthenticationError("unknown API key"))
            return
        scope[SCOPE_KEY] = KEY
        with telemetry.timed("db", "transaction:write"):
            await asyncio.sleep(0)
        telemetry.done("remember", True, None)
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})
        return
    raise RuntimeError("an unexpected failure")


@pytest.fixture
def records() -> Iterator[list[logging.LogRecord]]:
    caught: list[logging.LogRecord] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    root = logging.getLogger("graphmem")
    handler, level = Catch(), root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield caught
    root.removeHandler(handler)
    root.setLevel(level)


def _call(app: Any, method: str, path: str, **kw: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=kw.pop("client", ("127.0.0.1", 5)))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            return await http.request(method, path, **kw)

    return asyncio.run(go())


def test_every_answer_carries_its_id_and_one_access_record(
    records: list[logging.LogRecord],
) -> None:
    app = observed(_inner, "on", None)
    ok = _call(
        app,
        "POST",
        "/v1/namespaces/n/facts",
        headers={"Authorization": f"Bearer {SECRET}", "X-Request-Id": "mine-1"},
    )
    assert ok.status_code == 201 and ok.headers["x-request-id"] == "mine-1"
    refused = _call(app, "POST", "/v1/namespaces/n/facts", headers={"Authorization": "Bearer x"})
    assert refused.status_code == 401 and len(refused.headers["x-request-id"]) == 32
    failed = _call(app, "GET", "/boom")
    assert failed.status_code == 500 and failed.headers["x-request-id"]
    access = [r.access for r in records if r.name == "graphmem.access"]  # type: ignore[attr-defined]
    assert [a["status"] for a in access] == [201, 401, 500]
    first = access[0]
    assert first["route"] == "/v1/namespaces/{ns}/facts" and first["ns"] == "n"
    assert first["key"] == "agent-7" and first["request_id"] == "mine-1"
    assert first["db_ms"] >= 0 and first["ms"] >= first["db_ms"]
    assert access[1]["key"] is None and access[1]["request_id"] == refused.headers["x-request-id"]
    errors = [r for r in records if r.levelno >= logging.ERROR and r.name == "graphmem.serve"]
    assert errors and errors[0].exc_info is not None
    every = "".join(JsonFormatter().format(r) for r in records)
    assert SECRET not in every and failed.headers["x-request-id"] in every


def _families(app: Any) -> dict[str, Any]:
    text = _call(app, "GET", "/metrics").text
    return {f.name: f for f in text_string_to_metric_families(text)}


def _value(family: Any, name: str, **labels: str) -> float:
    found = [s.value for s in family.samples if s.name == name and _has(s.labels, labels)]
    return float(sum(found))


def _has(have: dict[str, str], want: dict[str, str]) -> bool:
    return all(have.get(k) == v for k, v in want.items())


def test_the_metrics_move_with_requests() -> None:
    app = observed(_inner, "on", None)
    auth = {"Authorization": f"Bearer {SECRET}"}
    for _ in range(3):
        _call(app, "POST", "/v1/namespaces/n/facts", headers=auth)
    _call(app, "POST", "/v1/namespaces/n/facts", headers={"Authorization": "Bearer no"})
    families = _families(app)
    route = "/v1/namespaces/{ns}/facts"
    requests = families["graphmem_requests"]
    assert _value(requests, "graphmem_requests_total", route=route, status="201") == 3
    assert _value(requests, "graphmem_requests_total", route=route, status="401") == 1
    writes = families["graphmem_writes"]
    assert _value(writes, "graphmem_writes_total", operation="remember") == 3
    refusals = families["graphmem_refusals"]
    assert _value(refusals, "graphmem_refusals_total", reason="unauthenticated") == 1
    latency = families["graphmem_request_duration_seconds"]
    assert _value(latency, "graphmem_request_duration_seconds_count", route=route) == 4
    db = families["graphmem_operation_database_seconds"]
    assert _value(db, "graphmem_operation_database_seconds_count", operation="remember") == 3
    assert "graphmem_neo4j_transactions_in_flight" in families
    assert families["graphmem_info"].samples[0].value == 1


def test_metrics_answer_loopback_unless_forwarded_and_each_app_has_its_own() -> None:
    app, other = observed(_inner, "on", None), observed(_inner, "public", None)
    assert _call(app, "GET", "/metrics").status_code == 200
    forwarded = _call(app, "GET", "/metrics", headers={"X-Forwarded-For": "203.0.113.9"})
    assert forwarded.status_code == 403
    assert _call(app, "GET", "/metrics", client=("203.0.113.9", 5)).status_code == 403
    assert _call(other, "GET", "/metrics", client=("203.0.113.9", 5)).status_code == 200
    _call(app, "GET", "/nothing")
    assert "unmatched" in _call(app, "GET", "/metrics").text
    off = observed(_inner, "off", None)
    assert isinstance(off, Observe) and off.metrics is None
    assert _call(off, "GET", "/metrics").status_code == 500  # the stand-in knows no /metrics


def test_a_metrics_registry_reads_the_key_counts() -> None:
    class Keys:
        class counts:
            cached, checked, unknown, id_reads = 5, 2, 1, 1

    metrics = ServiceMetrics(Keys())  # type: ignore[arg-type]
    text = metrics.exposition().decode()
    assert "graphmem_key_cache_hits_total 5.0" in text
    assert "graphmem_key_cache_misses_total 2.0" in text


# --- spans ------------------------------------------------------------------------------------
def test_the_hooks_record_spans_only_with_tracing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # Some frameworks' tests turn the OpenTelemetry SDK off for the whole process.
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    with telemetry.span("nothing") as none:
        assert none is None
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.enable_tracing(provider)
    try:
        with telemetry.spending() as spent, telemetry.server_span("GET", {}) as request:
            with telemetry.timed("embed", "embed", texts=2):
                pass
            with (
                telemetry.timed("db", "transaction:read"),
                telemetry.span("recall_search", **{"db.system": "neo4j", "none": None}),
            ):
                pass
            telemetry.end_server_span(request, "/v1/x", 200, **{"http.request.method": "GET"})
    finally:
        telemetry.disable_tracing()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"embed", "transaction:read", "recall_search", "GET /v1/x"}
    root = spans["GET /v1/x"]
    assert spans["embed"].parent is not None and root.context is not None
    assert spans["embed"].parent.span_id == root.context.span_id
    statement, transaction = spans["recall_search"], spans["transaction:read"]
    assert statement.parent is not None and transaction.context is not None
    assert statement.parent.span_id == transaction.context.span_id
    assert dict(spans["recall_search"].attributes or {}) == {"db.system": "neo4j"}
    assert spent.embed_ms >= 0 and spent.db_ms >= 0
