"""`run_peer_bench` at a tiny size against the test Neo4j: both systems store every fact and
answer every query (no timing thresholds)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator

import pytest

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from graphmem_bench.bench.peer_graphiti import run_peer_bench
from graphmem_bench.bench.peer_report import PeerOptions, PeerReport, render_peer_markdown
from graphmem_bench.bench.report import Percentiles


@pytest.fixture(scope="module")
def report(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> Iterator[PeerReport]:
    lines: list[str] = []
    result = run_peer_bench(
        PeerOptions(
            sizes=(200,),
            queries=20,
            warmup=3,
            warmup_facts=50,
            batch_size=64,
            server="configured",
            seed=3,
        ),
        settings=test_settings,
        target=graph.target,
        embedder=embedder,
        progress=lines.append,
    )
    assert any("graphiti-core" in line for line in lines)
    assert any("warming up" in line for line in lines)
    yield result
    # A configured Neo4j keeps both systems' data; the test database is shared.
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix OR n.group_id STARTS WITH $prefix "
        "DETACH DELETE n",
        prefix=result.prefix,
        database_=graph.database,
    )


def _count(graph: Graph, cypher: str, **params: str) -> int:
    records, _, _ = graph.driver.execute_query(cypher, params, database_=graph.database)
    return int(records[0]["n"])


def test_both_systems_store_every_fact(graph: Graph, report: PeerReport) -> None:
    (size,) = report.sizes
    assert size.size == 200 and size.namespace == size.group_id == f"{report.prefix}-200"
    assert size.graphmem.stored == size.graphiti.stored == 200
    edges = _count(
        graph,
        "MATCH (:Entity)-[e:RELATES_TO {group_id: $g}]->(:Entity) "
        "WHERE e.fact IS NOT NULL AND size(e.fact_embedding) = 384 RETURN count(e) AS n",
        g=size.group_id,
    )
    assert edges == 200
    entities = _count(
        graph,
        "MATCH (n:Entity {group_id: $g}) WHERE size(n.name_embedding) = 384 RETURN count(n) AS n",
        g=size.group_id,
    )
    assert entities == size.entities and 0 < entities < 400
    facts = _count(graph, "MATCH (f:Fact {ns: $ns}) RETURN count(f) AS n", ns=size.namespace)
    assert facts == 200
    for side in (size.graphmem, size.graphiti):
        assert side.write.items == 200 and side.write.batches == 4
        assert side.write.seconds > 0 and side.write.per_second > 0
    assert size.embedding.items == 200 and size.embedding.per_second > 0


def _ordered(p: Percentiles) -> bool:
    return 0.0 < p.p50 <= p.p95 <= p.p99 <= p.max


def test_both_systems_answer_the_same_queries(report: PeerReport) -> None:
    (size,) = report.sizes
    assert size.queries == 20 and size.warmup == 3 and size.k == 10
    for side in (size.graphmem, size.graphiti):
        assert _ordered(side.search_ms), side
        assert 0 < side.mean_hits <= 10
        assert 0 < side.found_share <= 1
    # Both rank the same facts with the same vectors and BM25-like text search: their top 10
    # share facts, though the fusion and filters differ.
    assert size.overlap_queries == 20
    assert 0.1 < size.overlap <= 1.0
    ratio = size.graphiti.search_ms.p95 / size.graphmem.search_ms.p95
    assert size.p95_ratio == pytest.approx(ratio)


def test_the_report_describes_the_run(report: PeerReport) -> None:
    assert report.peer_version == importlib.metadata.version("graphiti-core")
    assert report.server.mode == "configured" and report.server.kept
    assert report.prefix.startswith("peer-")
    (target,) = report.targets
    assert target.status == "n/a" and target.size == 200
    text = render_peer_markdown(report)
    assert "## Comparison" in text and report.prefix in text
