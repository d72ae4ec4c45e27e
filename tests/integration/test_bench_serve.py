"""`graphmem bench --serve` in a short bounded run against the test Neo4j: two real
``graphmem serve`` processes, four clients for three seconds on each path (no timing
thresholds)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from graphmem_bench.bench.serve import (
    PathFigures,
    ServeBenchOptions,
    ServeBenchReport,
    run_serve_bench,
)
from graphmem_bench.bench.serve_load import OPS
from graphmem_bench.bench.serve_render import render_serve_markdown

#: Seed 13 gives every operation among the clients' first two, so each is timed on both paths.
OPTIONS = ServeBenchOptions(clients=4, duration=3, servers=2, server="configured", seed=13)


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return []


@pytest.fixture(scope="module")
def report(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, lines: list[str]
) -> Iterator[ServeBenchReport]:
    result = run_serve_bench(
        OPTIONS,
        settings=test_settings,
        target=graph.target,
        embedder=embedder,
        progress=lines.append,
    )
    yield result
    # The benchmark leaves its namespaces in a configured Neo4j; the test database is shared.
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix DETACH DELETE n",
        prefix=f"{result.namespace_prefix}-",
        database_=graph.database,
    )


def _count(graph: Graph, query: str, prefix: str) -> int:
    records, _, _ = graph.driver.execute_query(query, prefix=prefix, database_=graph.database)
    return int(records[0]["n"])


def test_every_check_holds_and_nothing_failed(report: ServeBenchReport) -> None:
    assert report.passed, render_serve_markdown(report)
    assert [c.name for c in report.checks if not c.passed] == []
    assert len(report.checks) == 8 and report.key_revoked
    for figures in (report.rest, report.in_process):
        assert figures.failures == {}
        assert figures.clients == 4 and figures.seconds >= 3
        checks = figures.checks
        assert checks.acknowledged == checks.stored > 4  # the four chain roots and more
        assert checks.stored_after_failure == checks.unexplained == checks.missing == 0
        assert checks.client_chains == checks.client_chains_as_acknowledged == 4


def test_each_operation_is_timed_on_both_paths(report: ServeBenchReport) -> None:
    for figures in (report.rest, report.in_process):
        for op in OPS:
            timed = figures.op(op)
            assert timed.count >= 1 and timed.failed == 0, (figures.path, op)
            assert 0 < timed.ms.p50 <= timed.ms.p95 <= timed.ms.max
    text = render_serve_markdown(report)
    for op in OPS:
        assert f"| {op} | {report.rest.op(op).count:,} |" in text


def _writes(figures: PathFigures) -> int:
    return figures.op("remember").count + figures.op("supersede").count


def test_the_graph_holds_what_the_clients_saw(report: ServeBenchReport, graph: Graph) -> None:
    # Counted here with plain Cypher, apart from the benchmark's own reading.
    for figures in (report.rest, report.in_process):
        prefix = figures.namespace_prefix
        assert prefix.startswith(f"{report.namespace_prefix}-")
        facts = "MATCH (f:Fact) WHERE f.ns STARTS WITH $prefix RETURN count(f) AS n"
        assert _count(graph, facts, prefix) == _writes(figures) + 4
        edges = (
            "MATCH (f:Fact)-[:SUPERSEDES]->(old:Fact) WHERE f.ns STARTS WITH $prefix "
            "RETURN count(*) AS n"
        )
        assert _count(graph, edges, prefix) == figures.op("supersede").count
        retired = (
            "MATCH (f:Fact) WHERE f.ns STARTS WITH $prefix AND f.status = 'superseded' "
            "RETURN count(f) AS n"
        )
        assert _count(graph, retired, prefix) == figures.op("supersede").count
        spaces = "MATCH (f:Fact) WHERE f.ns STARTS WITH $prefix RETURN count(DISTINCT f.ns) AS n"
        assert _count(graph, spaces, prefix) == 4


def test_the_servers_ran_on_loopback_and_stopped(report: ServeBenchReport) -> None:
    assert len(report.servers) == 2
    assert len({s.url for s in report.servers}) == 2
    for server in report.servers:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.graceful and server.ready_seconds > 0
        with pytest.raises(ProcessLookupError):
            os.kill(server.pid, 0)


def test_the_key_is_revoked_and_the_progress_told(
    report: ServeBenchReport,
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    lines: list[str],
) -> None:
    with Memory(test_settings, target=graph.target, embedder=embedder) as memory:
        keys = [k for k in memory.keys.list(include_revoked=True) if k.name == report.key_name]
    assert len(keys) == 1 and keys[0].revoked_at is not None
    assert keys[0].prefix == f"{report.namespace_prefix}-" and keys[0].role == "write"
    assert "REST: 4 clients for 3 s" in lines and "in-process: 4 clients for 3 s" in lines
    assert sum("ready after" in line for line in lines) == 2


def test_the_cost_of_logs_and_metrics_is_measured_in_the_same_run(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    options = ServeBenchOptions(
        clients=2, duration=3, servers=1, server="configured", seed=13, observe_cost=True
    )
    report = run_serve_bench(
        options, settings=test_settings, target=graph.target, embedder=embedder
    )
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix DETACH DELETE n",
        prefix=f"{report.namespace_prefix}-",
        database_=graph.database,
    )
    # One server asked for, two run: one with its access log and metrics, one without.
    assert len(report.servers) == 2 and report.rest.failures == {}
    cost = report.observe_cost
    assert cost is not None and cost.observed_p50 > 0 and cost.quiet_p50 > 0
    assert sum(c.observed_n for c in cost.ops) > 0 and sum(c.quiet_n for c in cost.ops) > 0
    assert report.checks[-1].name == "logs and metrics cost at most 5% of p50"
    assert "## The access log's and metrics' cost" in render_serve_markdown(report)
