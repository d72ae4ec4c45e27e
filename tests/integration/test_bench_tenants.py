"""`graphmem bench --tenants` at a tiny size against the test Neo4j (no timing thresholds)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from graphmem_bench.bench import tenants
from graphmem_bench.bench.report import Percentiles
from graphmem_bench.bench.tenants import namespace_vectors, pool_facts, run_tenants_bench
from graphmem_bench.bench.tenants_report import (
    TenantsOptions,
    TenantsReport,
    exact_rankings,
    render_tenants_markdown,
)

OPTIONS = TenantsOptions(
    namespaces=5,
    facts=20,
    large=200,
    small=50,
    pool=300,
    queries=5,
    warmup=2,
    batch_size=50,
    server="configured",
    seed=7,
)


@pytest.fixture(scope="module")
def calls() -> list[tuple[list[str], list[str], float]]:
    """Each comparison of a recall's hits with the exact ranking the run made, in order."""
    return []


@pytest.fixture(scope="module")
def report(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    calls: list[tuple[list[str], list[str], float]],
) -> Iterator[TenantsReport]:
    real = tenants.exact_top_share

    def recorded(hits: Any, exact: Any, **kwargs: Any) -> float:
        share = real(hits, exact, **kwargs)
        calls.append((list(hits), list(exact), share))
        return share

    lines: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tenants, "exact_top_share", recorded)
        result = run_tenants_bench(
            OPTIONS,
            settings=test_settings,
            target=graph.target,
            embedder=embedder,
            progress=lines.append,
        )
    assert any(line.startswith("  loading: 350/350 facts") for line in lines), lines
    assert any("recall, large, vector" in line for line in lines)
    yield result
    # The benchmark leaves its namespaces in a configured Neo4j; the test database is shared.
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix DETACH DELETE n",
        prefix=result.namespace_prefix,
        database_=graph.database,
    )


def _ordered(p: Percentiles) -> bool:
    return 0.0 < p.p50 <= p.p95 <= p.p99 <= p.max


def _stored(graph: Graph, ns: str) -> dict[str, list[float]]:
    records, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns}) RETURN f.text AS text, f.embedding AS embedding",
        ns=ns,
        database_=graph.database,
    )
    return {r["text"]: r["embedding"] for r in records}


def test_the_report_describes_the_run_and_its_server(report: TenantsReport) -> None:
    assert report.options == OPTIONS
    assert report.server.neo4j_version not in ("", "unknown") and report.server.kept
    assert report.namespace_prefix.startswith("bench-tenants-")
    assert report.pool_texts == 300 and report.pool_embedding.items == 300
    assert report.load.items == 5 * 20 + 200 + 50 and report.load.batches == 5 + 4 + 1
    assert report.load.per_second > 0 and report.graph_facts >= 350
    assert report.load_average is not None and min(report.load_average) >= 0  # Linux
    assert [t.name for t in report.targets] == ["recall db p95, large namespace among tenants"]
    assert report.targets[0].status == "n/a"  # judged from 100,000 facts
    text = render_tenants_markdown(report)
    assert f"| {report.server.neo4j_version} | large | 200 | default (hybrid, gated) |" in text
    assert "5 tenant namespaces of 20 facts, a small namespace of 50 facts" in text


def test_each_namespace_reports_both_recalls(report: TenantsReport) -> None:
    assert [(n.name, n.facts) for n in report.namespaces] == [
        ("small", 50),
        ("large", 200),
        ("tenant", 20),
    ]
    for figures in report.namespaces:
        assert figures.ns.startswith(report.namespace_prefix)
        assert [r.mode for r in figures.recalls] == ["default", "vector"]
        for r in figures.recalls:
            assert (r.queries, r.warmup) == (5, 2)
            assert _ordered(r.db_ms) and _ordered(r.client_ms), r
            assert r.client_ms.p50 >= r.db_ms.p50  # the call holds its read transaction
            assert 0.0 <= r.exact_top_all <= r.exact_top_mean <= 1.0
            assert 0 < r.mean_hits <= 10
            assert 0 <= r.exact_fallbacks <= r.queries and 0 <= r.widened <= r.queries
            # How each recall's first fact read went, and where its time went.
            assert sum(r.paths.values()) == r.queries
            names = [st.name for st in r.statements]
            assert names[0].startswith("recall_search") and "recall_details" in names
            assert "transaction:read" in names
            assert all(st.per_recall > 0 and st.client_ms.p50 >= 0 for st in r.statements)
        # Without the gate the vector search returns ten facts, re-ranked by exact cosine.
        vector = figures.mode("vector")
        assert vector is not None and vector.mean_hits == 10.0
        # The bare vector read beside it, asking for no more than the namespace holds.
        assert figures.bare is not None and figures.bare.db_ms.p50 > 0
        assert figures.bare.statement in ("bench_bare_search", "bench_bare_vector")
        assert figures.bare.k == (
            min(60, figures.facts) if figures.bare.statement == "bench_bare_search" else 60
        )
    # A namespace that holds no more facts than the read asks for (60 at k=10) is scored
    # exactly; the large one (200) is read through the index.
    paths = {n.name: set(n.recalls[1].paths) for n in report.namespaces}
    assert paths["small"] == paths["tenant"] == {"exact"}
    assert paths["large"] in ({"filtered"}, {"exact"})  # exact where the server cannot filter


def test_the_exact_top_five_figures_are_the_queries_own(
    report: TenantsReport, calls: list[tuple[list[str], list[str], float]]
) -> None:
    # One comparison per measured query, namespace and mode, in the order of the report.
    assert len(calls) == 3 * 2 * 5
    for n, figures in enumerate(report.namespaces):
        for m, r in enumerate(figures.recalls):
            shares = [share for _, _, share in calls[(2 * n + m) * 5 : (2 * n + m + 1) * 5]]
            assert r.exact_top_all == sum(s == 1.0 for s in shares) / 5
            assert r.exact_top_mean == pytest.approx(sum(shares) / 5)
    for hits, exact, share in calls:
        assert len(exact) == 5 and len(set(exact)) == 5 and len(hits) <= 10
        assert share == sum(i in hits for i in exact) / 5


def test_the_exact_ranking_agrees_with_a_cypher_scan_of_the_stored_vectors(
    report: TenantsReport, graph: Graph, embedder: Embedder
) -> None:
    large = report.namespaces[1].ns
    ids, stored = namespace_vectors(graph, large)
    assert len(ids) == 200 and stored.shape == (200, 384)
    questions = ["Where does Priya work now?", "Who has a dog?", "What did Omar cook?"]
    vectors = embedder.embed(questions)
    for vector, ranking in zip(vectors, exact_rankings(stored, vectors), strict=True):
        records, _, _ = graph.driver.execute_query(
            "MATCH (f:Fact {ns: $ns}) "
            "RETURN f.id AS id ORDER BY vector.similarity.cosine(f.embedding, $v) DESC LIMIT 5",
            ns=large,
            v=vector.tolist(),
            database_=graph.database,
        )
        assert [ids[i] for i in ranking] == [r["id"] for r in records]


def test_tenants_hold_near_identical_copies_of_one_pool(
    report: TenantsReport, graph: Graph
) -> None:
    pool = {f.text for f in pool_facts(300, seed=7)}
    prefix = report.namespace_prefix
    tenant_facts = [_stored(graph, f"{prefix}-t{t:05d}") for t in range(5)]
    small = _stored(graph, f"{prefix}-small")
    large = _stored(graph, f"{prefix}-large")
    assert [len(t) for t in tenant_facts] == [20] * 5 and len(small) == 50 and len(large) == 200
    for stored in (*tenant_facts, small, large):
        assert set(stored) <= pool  # texts verbatim from the pool, none twice in a namespace
    # A text held by two namespaces has near-identical, not equal, vectors there.
    pairs = [
        (np.asarray(a[text]), np.asarray(b[text]))
        for a, b in ((small, large), *((t, large) for t in tenant_facts))
        for text in set(a) & set(b)
    ]
    assert pairs
    for one, other in pairs:
        cosine = float(one @ other / np.linalg.norm(one) / np.linalg.norm(other))
        assert 0.97 < cosine < 0.99999
