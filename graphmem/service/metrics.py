"""The service's Prometheus metrics, answered at ``/metrics`` in Prometheus' text format.

Each application has a registry of its own (several may live in one process). What
``graphmem serve --metrics`` decides: ``on`` (the default) answers a client on loopback whose
request no proxy forwarded (no ``Forwarded`` or ``X-Forwarded-For`` header), and any other
with an admin API key; ``public`` answers everyone; ``off`` collects nothing and ``/metrics``
is not found. The series are listed in ``docs/operations/observability.md``."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from graphmem import __version__, telemetry
from graphmem.edge.asgi import Scope, Send, respond_error
from graphmem.edge.keys import KeyCheck, bearer
from graphmem.errors import AuthenticationError, GraphmemError, PermissionDeniedError

MetricsMode = Literal["on", "public", "off"]

#: Seconds: a request's whole time; then its time in Neo4j or the embedder.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
WORK_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
RUN_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)

#: What a refused request's status says of the reason.
REFUSALS = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    413: "too_large",
    422: "invalid",
    429: "rate_limited",
}
_FORWARDED = (b"forwarded", b"x-forwarded-for", b"x-real-ip")


class ServiceMetrics:
    """The series of one application, and what one request adds to them."""

    def __init__(self, keys: KeyCheck | None = None) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "graphmem_requests",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "graphmem_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by route template.",
            ["route"],
            buckets=REQUEST_BUCKETS,
            registry=registry,
        )
        self.database = Histogram(
            "graphmem_operation_database_seconds",
            "Time an operation's request spent in Neo4j transactions, by operation.",
            ["operation"],
            buckets=WORK_BUCKETS,
            registry=registry,
        )
        self.embedding = Histogram(
            "graphmem_operation_embedding_seconds",
            "Time an operation's request spent embedding text, by operation.",
            ["operation"],
            buckets=WORK_BUCKETS,
            registry=registry,
        )
        self.writes = Counter(
            "graphmem_writes",
            "Operations that may change the graph, carried out (REST and MCP), by operation.",
            ["operation"],
            registry=registry,
        )
        self.refusals = Counter(
            "graphmem_refusals",
            "Requests refused (4xx but not found), by reason and status.",
            ["reason", "status"],
            registry=registry,
        )
        self.consolidations = Histogram(
            "graphmem_consolidation_run_seconds",
            "Consolidation runs asked for over the service, by their status (finished, "
            "partial, skipped, dry_run), and their duration.",
            ["status"],
            buckets=RUN_BUCKETS,
            registry=registry,
        )
        registry.register(_Live(keys))
        ProcessCollector(registry=registry)

    def observe(
        self, route: str, method: str, status: int, seconds: float, spent: telemetry.Spent
    ) -> None:
        """One request answered."""
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route).observe(seconds)
        reason = REFUSALS.get(status)
        if reason is not None:
            self.refusals.labels(reason, str(status)).inc()
        for name, writes, result in spent.done:
            if writes:
                self.writes.labels(name).inc()
            if name == "consolidate":
                run = getattr(result, "timings", {}).get("total", seconds)
                self.consolidations.labels(str(getattr(result, "status", "unknown"))).observe(run)
        if spent.done:
            name = spent.done[0][0]
            if spent.db_ms:
                self.database.labels(name).observe(spent.db_ms / 1000)
            if spent.embed_ms:
                self.embedding.labels(name).observe(spent.embed_ms / 1000)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _Live(Collector):
    """What is read when scraped: the key check's counts and the transactions in flight."""

    def __init__(self, keys: KeyCheck | None) -> None:
        self.keys = keys

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "graphmem_info", "The graphmem version serving.", labels=["version"]
        )
        info.add_metric([__version__], 1)
        yield info
        yield GaugeMetricFamily(
            "graphmem_neo4j_transactions_in_flight",
            "Neo4j transactions this process has open (each holds a pooled connection).",
            value=telemetry.transactions_in_flight(),
        )
        if self.keys is not None:
            counts = self.keys.counts
            for name, value, doc in (
                ("hits", counts.cached, "API keys answered from the key cache."),
                ("misses", counts.checked, "API keys read and checked against Neo4j."),
                ("unknown", counts.unknown, "API keys refused: no key node has their id."),
                ("id_reads", counts.id_reads, "Reads of the ids of every key node."),
            ):
                yield CounterMetricFamily(f"graphmem_key_cache_{name}", doc, value=value)


def _loopback(scope: Scope) -> bool:
    """A client on this machine whose request no proxy forwarded."""
    client = scope.get("client")
    if not client:
        return False
    try:
        if not ipaddress.ip_address(client[0]).is_loopback:
            return False
    except ValueError:
        return False
    return not any(bytes(name).lower() in _FORWARDED for name, _ in scope.get("headers", []))


async def answer_metrics(
    metrics: ServiceMetrics,
    mode: MetricsMode,
    keys: KeyCheck | None,
    scope: Scope,
    send: Send,
) -> None:
    """``/metrics`` to a client the mode lets in (an admin key opens it to any)."""
    if mode != "public" and not _loopback(scope):
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        try:
            if keys is None:
                raise PermissionDeniedError("/metrics answers loopback clients only")
            key = await keys.key(bearer(headers))
            if not key.allows("admin"):
                raise PermissionDeniedError(
                    f"the API key {key.name!r} has the role {key.role!r}; /metrics from "
                    "another machine needs 'admin'"
                )
        except (AuthenticationError, PermissionDeniedError) as exc:
            await respond_error(send, exc)
            return
        except GraphmemError as exc:
            await respond_error(send, exc, "the key could not be checked")
            return
    body = metrics.exposition()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", CONTENT_TYPE_LATEST.encode()),
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


__all__ = ["REFUSALS", "MetricsMode", "ServiceMetrics", "answer_metrics"]
