"""What ``graphmem serve`` tells its operator, from real processes on the test Neo4j: one JSON
access line per request with its fields and never a key's secret, the request id echoed on
every answer (the outer layers' too), ``/metrics`` in Prometheus' format with counters that
move, both turned off, and (in process) the trace of a recall."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from graphmem import telemetry
from graphmem.client import AsyncMemory, Memory
from graphmem.client.graph import Graph
from graphmem.edge.hosts import edge_policy
from graphmem.embed.embedder import Embedder
from graphmem.service.app import ServeOptions, build_app
from graphmem.settings import GraphmemSettings
from tests.service import Served, bearer, new_key, serve_process

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def json_served(graph: Graph) -> Iterator[Served]:
    with serve_process(graph, "--log-format", "json", "--max-body-mb", "0.05") as running:
        yield running


def _access(served: Served, ids: set[str], wait: float = 10.0) -> dict[str, dict[str, Any]]:
    """The access lines of these request ids (each written as its answer ends)."""
    deadline = time.monotonic() + wait
    while True:
        found: dict[str, dict[str, Any]] = {}
        for line in served.log().splitlines():
            if line.startswith("{"):
                record = json.loads(line)  # every JSON line parses
                if record.get("logger") == "graphmem.access" and record["request_id"] in ids:
                    assert record["request_id"] not in found, "two access lines for one request"
                    found[record["request_id"]] = record
        if set(found) == ids or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_one_access_line_per_request_and_never_a_secret(
    json_served: Served, admin: Memory, ns: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    other = new_key(admin, "read", namespaces=[f"{ns}-other"])
    url = json_served.url
    with httpx.Client(base_url=url, timeout=60) as http:
        calls = {
            "remember": http.post(
                f"/v1/namespaces/{ns}/facts",
                json={"text": "Alice lives in Lisbon."},
                headers={**bearer(key), "X-Request-Id": f"rem-{uuid.uuid4().hex[:6]}"},
            ),
            "recall": http.post(
                f"/v1/namespaces/{ns}/search",
                json={"query": "Where does Alice live?"},
                headers=bearer(key),
            ),
            "unauthenticated": http.post(
                f"/v1/namespaces/{ns}/search", json={"query": "q"}, headers=bearer("gm_nope")
            ),
            "forbidden": http.post(
                f"/v1/namespaces/{ns}/search", json={"query": "q"}, headers=bearer(other)
            ),
            "too_large": http.post(
                f"/v1/namespaces/{ns}/facts",
                content=b"x" * 100_000,
                headers={**bearer(key), "Content-Type": "application/json"},
            ),
            "health": http.get("/health"),
            "mcp": http.post(
                "/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {
                        "name": "search_memories",
                        "arguments": {"query": "Where does Alice live?", "ns": ns},
                    },
                },
                headers={**bearer(key), **MCP_HEADERS},
            ),
        }
    statuses = {name: r.status_code for name, r in calls.items()}
    assert statuses == {
        "remember": 201,
        "recall": 200,
        "unauthenticated": 401,
        "forbidden": 403,
        "too_large": 413,
        "health": 200,
        "mcp": 200,
    }
    ids = {name: r.headers["x-request-id"] for name, r in calls.items()}
    assert ids["remember"].startswith("rem-") and len(set(ids.values())) == len(ids)
    lines = _access(json_served, set(ids.values()))
    assert set(lines) == set(ids.values())
    by = {name: lines[rid] for name, rid in ids.items()}
    for name, line in by.items():
        assert line["status"] == statuses[name]
        assert line["level"] in ("info", "error") and line["time"].endswith("Z")
        assert {"method", "route", "ms", "db_ms", "embed_ms"} <= set(line)
    assert by["remember"]["route"] == "/v1/namespaces/{ns}/facts"
    assert by["remember"]["key"] == key.api_key.name and by["remember"]["ns"] == ns
    recall = by["recall"]
    assert recall["route"] == "/v1/namespaces/{ns}/search" and recall["method"] == "POST"
    assert recall["db_ms"] > 0 and recall["embed_ms"] > 0
    assert recall["ms"] >= recall["db_ms"] + recall["embed_ms"] - 1
    assert by["unauthenticated"]["key"] is None
    assert by["forbidden"]["key"] == other.api_key.name
    assert by["too_large"]["route"] == "/v1/namespaces/{ns}/facts"
    assert by["health"]["route"] == "/health"
    assert by["mcp"]["route"] == "/mcp" and by["mcp"]["mcp"] == "tools/call:search_memories"
    assert by["mcp"]["ns"] == ns and by["mcp"]["key"] == key.api_key.name
    assert by["mcp"]["db_ms"] > 0 and by["mcp"]["embed_ms"] > 0  # the tool's work, counted
    log = json_served.log()
    for secret in (key.key, other.key, "gm_nope"):
        assert secret not in log


def _metrics(url: str, **kw: Any) -> dict[str, Any]:
    answer = httpx.get(f"{url}/metrics", timeout=30, **kw)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {f.name: f for f in text_string_to_metric_families(answer.text)}


def _value(families: dict[str, Any], family: str, sample: str, **labels: str) -> float:
    if family not in families:
        return 0.0
    samples = families[family].samples
    labelled = [s for s in samples if all(s.labels.get(k) == v for k, v in labels.items())]
    return float(sum(s.value for s in labelled if s.name == sample))


def test_the_metrics_parse_and_move_with_requests(
    json_served: Served, admin: Memory, ns: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    url = json_served.url
    route = "/v1/namespaces/{ns}/facts"
    before = _metrics(url)
    for n in range(3):
        answer = httpx.post(
            f"{url}/v1/namespaces/{ns}/facts",
            json={"text": f"Fact {n} of the metrics test."},
            headers=bearer(key),
            timeout=60,
        )
        assert answer.status_code == 201
    search = {"query": "metrics test"}
    httpx.post(f"{url}/v1/namespaces/{ns}/search", json=search, headers=bearer(key), timeout=60)
    httpx.post(f"{url}/v1/namespaces/{ns}/search", json=search, headers=bearer("x"), timeout=60)
    after = _metrics(url)

    def moved(family: str, sample: str, **labels: str) -> float:
        return _value(after, family, sample, **labels) - _value(before, family, sample, **labels)

    requests = ("graphmem_requests", "graphmem_requests_total")
    assert moved(*requests, route=route, method="POST", status="201") == 3
    assert moved("graphmem_writes", "graphmem_writes_total", operation="remember") == 3
    refusals = ("graphmem_refusals", "graphmem_refusals_total")
    assert moved(*refusals, reason="unauthenticated", status="401") == 1
    latency = ("graphmem_request_duration_seconds", "graphmem_request_duration_seconds_count")
    assert moved(*latency, route=route) == 3
    db = "graphmem_operation_database_seconds"
    assert moved(db, f"{db}_count", operation="recall") == 1
    embed = "graphmem_operation_embedding_seconds"
    assert moved(embed, f"{embed}_count", operation="recall") == 1
    assert moved(embed, f"{embed}_sum", operation="recall") > 0
    misses = "graphmem_key_cache_misses"
    assert moved(misses, f"{misses}_total") >= 4  # --key-cache 0: every key is read
    assert "graphmem_neo4j_transactions_in_flight" in after


def test_metrics_from_elsewhere_need_an_admin_key(json_served: Served, admin: Memory) -> None:
    through_proxy = {"X-Forwarded-For": "203.0.113.7"}
    refused = httpx.get(f"{json_served.url}/metrics", headers=through_proxy, timeout=30)
    assert refused.status_code == 401 and refused.headers["x-request-id"]
    writer = new_key(admin, "write", namespaces=["anything"])
    headers = {**through_proxy, **bearer(writer)}
    assert httpx.get(f"{json_served.url}/metrics", headers=headers, timeout=30).status_code == 403
    boss = new_key(admin, "admin", prefix="")
    _metrics(json_served.url, headers={**through_proxy, **bearer(boss)})


def test_logs_and_metrics_off(graph: Graph, admin: Memory, ns: str) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    with serve_process(graph, "--log-level", "off", "--metrics", "off") as served:
        answer = httpx.post(
            f"{served.url}/v1/namespaces/{ns}/facts",
            json={"text": "Quiet."},
            headers={**bearer(key), "X-Request-Id": "quiet-1"},
            timeout=60,
        )
        assert answer.status_code == 201 and answer.headers["x-request-id"] == "quiet-1"
        assert httpx.get(f"{served.url}/metrics", timeout=30).status_code == 404
        time.sleep(0.5)
        assert "quiet-1" not in served.log() and "graphmem.access" not in served.log()


# --- a trace, in process ----------------------------------------------------------------------
def test_a_recall_is_traced_with_its_embedding_and_cypher(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    admin: Memory,
    ns: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Some frameworks' tests turn the OpenTelemetry SDK off for the whole process.
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    from fastapi.testclient import TestClient
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    admin.remember("Bob works at the harbour.", ns=ns)
    key = new_key(admin, "read", namespaces=[ns])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    memory = AsyncMemory(test_settings, target=graph.target, embedder=embedder)
    app = build_app(memory, ServeOptions(edge=edge_policy("127.0.0.1", 8080)))
    telemetry.enable_tracing(provider)
    try:
        with TestClient(app, base_url="http://127.0.0.1:8080") as client:
            answer = client.post(
                f"/v1/namespaces/{ns}/search",
                json={"query": "Where does Bob work?"},
                headers={**bearer(key), "X-Request-Id": "traced-1"},
            )
            assert answer.status_code == 200, answer.text
    finally:
        telemetry.disable_tracing()  # the app's lifespan has closed the client
    spans = exporter.get_finished_spans()
    (request,) = [s for s in spans if s.name == "POST /v1/namespaces/{ns}/search"]
    attributes = dict(request.attributes or {})
    assert attributes["graphmem.request_id"] == "traced-1"
    assert attributes["graphmem.namespace"] == ns
    assert attributes["graphmem.key"] == key.api_key.name
    assert attributes["http.response.status_code"] == 200
    trace = [s for s in spans if s.context.trace_id == request.context.trace_id]
    by_id = {s.context.span_id: s for s in trace}

    def under_request(span: Any) -> bool:
        while span.parent is not None:
            if span.parent.span_id == request.context.span_id:
                return True
            span = by_id[span.parent.span_id]
        return False

    names = {s.name for s in trace if under_request(s)}
    assert "embed" in names and "transaction:read" in names
    statements = [s for s in trace if dict(s.attributes or {}).get("db.system") == "neo4j"]
    assert statements and all(under_request(s) for s in statements)
    assert any(s.name.startswith("recall_") for s in statements), sorted(names)
    for s in statements:
        assert by_id[s.parent.span_id].name == "transaction:read"  # type: ignore[union-attr]
        assert set(dict(s.attributes or {})) == {"db.system"}  # no text, no parameters
