"""`run_bench` end to end at a tiny size against the test Neo4j (no timing thresholds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from graphmem_bench.bench.render import render_markdown
from graphmem_bench.bench.report import BenchOptions, BenchReport, Percentiles
from graphmem_bench.bench.runner import run_bench


@pytest.fixture(scope="module")
def progress() -> list[str]:
    """The lines the run of ``report`` printed."""
    return []


@pytest.fixture(scope="module")
def report(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    progress: list[str],
) -> Iterator[BenchReport]:
    result = run_bench(
        BenchOptions(
            sizes=(300,),
            queries=20,
            warmup=3,
            warmup_facts=120,
            batch_size=100,
            server="configured",
            seed=5,
        ),
        settings=test_settings,
        target=graph.target,
        embedder=embedder,
        progress=progress.append,
    )
    assert any("end-to-end" in line for line in progress)
    assert any("warming up" in line for line in progress)
    yield result
    # The benchmark leaves its namespaces in a configured Neo4j; the test database is shared.
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix DETACH DELETE n",
        prefix=result.namespace_prefix,
        database_=graph.database,
    )


def _ordered(p: Percentiles) -> bool:
    return 0.0 <= p.p50 <= p.p95 <= p.p99 <= p.max


def test_every_phase_reports_a_positive_throughput(report: BenchReport) -> None:
    (size,) = report.sizes
    assert size.size == 300 and size.messages == 30
    for phase in (size.embedding_ceiling, size.end_to_end, size.neo4j_only, size.episodes):
        assert phase.items > 0 and phase.seconds > 0 and phase.per_second > 0
        assert phase.batches >= 1
    assert size.end_to_end.items == size.neo4j_only.items == 300
    assert size.end_to_end_ratio > 0
    assert 0 < size.end_to_end_embed_seconds < size.end_to_end.seconds


def test_updates_were_written_as_supersessions(report: BenchReport) -> None:
    (size,) = report.sizes
    assert size.updates > 0
    assert size.superseded == size.updates
    assert size.graph_facts >= 300 + 120 and size.graph_episodes >= 30  # with the warm-up


def test_recall_percentiles_are_in_order(report: BenchReport) -> None:
    recall = report.sizes[0].recall
    assert recall.queries == 20 and recall.warmup == 3 and recall.k == 10
    for p in (recall.total_ms, recall.embed_ms, recall.db_ms, recall.stamp_ms, recall.db_stamp_ms):
        assert _ordered(p), p
    assert recall.total_ms.p50 > 0 and recall.db_ms.p50 > 0
    assert recall.mean_hits > 0 and recall.found_share > 0


def test_the_report_describes_the_run(report: BenchReport) -> None:
    assert report.server.mode == "configured" and report.server.kept
    assert report.server.neo4j_version not in ("", "unknown")
    assert report.embedder.dimension == 384
    assert report.namespace_prefix.startswith("bench-")
    assert all(ns.startswith(report.namespace_prefix) for ns in report.sizes[0].namespaces.values())
    assert {t.status for t in report.targets} <= {"pass", "fail", "n/a"}
    assert len(report.targets) == 7  # four per size, three for the backends
    assert "Neo4j-only / bare" in {t.name for t in report.targets}
    text = render_markdown(report)
    assert "## Recall latency" in text and report.namespace_prefix in text
    assert "## Embedding backends (300 texts)" in text


def test_the_bare_baseline_writes_the_same_graph_and_reports_a_ratio(
    report: BenchReport, graph: Graph
) -> None:
    (size,) = report.sizes
    bare = size.bare
    assert bare is not None and bare.items == 300 and bare.batches == size.neo4j_only.batches
    assert bare.per_second > 0 and size.bare_ratio is not None
    assert size.bare_ratio == pytest.approx(size.neo4j_only.per_second / bare.per_second)
    (target,) = [t for t in report.targets if t.name == "Neo4j-only / bare"]
    assert target.threshold == 0.9 and target.measured == size.bare_ratio
    assert target.status == ("pass" if size.bare_ratio >= 0.9 else "fail")
    assert "| Neo4j-only / bare |" in render_markdown(report)

    def stored(ns: str) -> list[tuple[object, ...]]:
        records, _, _ = graph.driver.execute_query(
            "MATCH (f:Fact {ns: $ns}) "
            "OPTIONAL MATCH (f)-[s:SUPERSEDES]->(old:Fact) "
            "RETURN f.text AS text, keys(f) AS keys, f.embedding AS embedding, "
            "f.status AS status, f.tags AS tags, f.source AS source, f.text_hash AS hash, "
            "f.valid_from IS NOT NULL AS valid_from, f.retired_at IS NOT NULL AS retired, "
            "f.valid_to IS NOT NULL AS valid_to, f.superseded_by IS NOT NULL AS replaced, "
            "old.text AS old, keys(s) AS edge",
            ns=ns,
            database_=graph.database,
        )
        return sorted(
            (
                r["text"],
                tuple(sorted(r["keys"])),
                tuple(r["embedding"]),
                r["status"],
                tuple(r["tags"]),
                r["source"],
                r["hash"],
                r["valid_from"],
                r["retired"],
                r["valid_to"],
                r["replaced"],
                r["old"],
                tuple(sorted(r["edge"] or ())),
            )
            for r in records
        )

    ours, theirs = stored(size.namespaces["neo4j_only"]), stored(size.namespaces["bare"])
    assert len(ours) == 300 and ours == theirs  # the same facts, properties, vectors, edges
    assert sum(row[3] == "superseded" for row in ours) == size.updates


def test_the_backends_are_compared_on_the_same_texts(report: BenchReport) -> None:
    backends = report.backends
    assert backends is not None and backends.texts == 300 and backends.skipped is None
    torch, fp32, int8 = backends.backends
    assert (torch.backend, fp32.backend, int8.backend) == ("torch", "onnx", "onnx")
    assert (fp32.precision, int8.precision) == ("fp32", "int8")
    assert torch.cosine_mean is None  # the reference
    assert fp32.cosine_min is not None and fp32.cosine_min > 0.9999
    assert fp32.model_id == torch.model_id and int8.model_id == f"{torch.model_id}@int8"
    assert int8.cosine_mean is not None and int8.cosine_mean >= 0.99
    assert all(b.ceiling.items == 300 and b.ceiling.per_second > 0 for b in backends.backends)


def test_recall_runs_before_the_neo4j_only_twins_are_written(
    report: BenchReport, progress: list[str]
) -> None:
    # The Neo4j-only namespace repeats the end-to-end vectors; recall must not search them.
    start = next(i for i, line in enumerate(progress) if line.startswith("  end-to-end: "))
    measured = progress[start:]  # the warm-up before it also writes and ingests

    def lines(label: str) -> list[int]:
        return [i for i, line in enumerate(measured) if line.startswith(f"  {label}: ")]

    assert max(lines("end-to-end")) < min(lines("episodes"))
    assert max(lines("episodes")) < min(lines("recall"))
    assert max(lines("recall")) < min(lines("Neo4j-only"))


def test_the_consolidation_benchmark_merges_what_it_planted_and_counts_llm_tokens(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    from graphmem_bench.bench.consolidation import (
        ConsolidationBenchOptions,
        render_consolidation_markdown,
        run_consolidation_bench,
    )

    lines: list[str] = []
    options = ConsolidationBenchOptions(facts=300, new=40, server="configured", seed=3)
    try:
        report = run_consolidation_bench(
            options,
            settings=test_settings,
            target=graph.target,
            embedder=embedder,
            progress=lines.append,
        )
    finally:
        _drop_namespaces(graph, "bench-consolidate-")
    assert report.new_facts == 40 and report.planted_duplicates == 4
    assert report.merged >= report.planted_duplicates  # the planted repeats, at least
    assert report.heuristic.total > 0 and report.heuristic.read > 0
    assert report.llm_calls > 0 and report.llm_prompt_tokens > 100 * report.llm_calls
    assert report.passed  # the target is judged at 1,000 among 10,000 only
    text = render_consolidation_markdown(report)
    assert "per 100 new facts" in text and "| heuristic, new facts |" in text
    assert any("LLM dry run" in line for line in lines)


def test_the_mcp_benchmark_times_both_paths_on_the_same_questions(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    from graphmem_bench.bench.mcp import McpBenchOptions, render_mcp_markdown, run_mcp_bench

    lines: list[str] = []
    options = McpBenchOptions(facts=120, queries=6, warmup=2, server="configured", seed=4)
    try:
        report = run_mcp_bench(
            options,
            settings=test_settings,
            target=graph.target,
            embedder=embedder,
            progress=lines.append,
        )
    finally:
        _drop_namespaces(graph, "bench-mcp-")
    assert sorted(report.latency) == ["direct", "mcp", "mcp_full_ids"]
    for p in report.latency.values():
        assert 0 < p.p50 <= p.p95 <= p.max
    assert report.mean_results == report.direct_results > 0  # MCP returns what direct does
    text = render_mcp_markdown(report)
    assert "| search_memories over MCP |" in text and "| AsyncMemory.recall (direct) |" in text
    assert any("timed searches" in line for line in lines)


def _drop_namespaces(graph: Graph, prefix: str) -> None:
    """Remove what a benchmark left in the test graph under its namespaces."""
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix DETACH DELETE n",
        prefix=prefix,
        database_=graph.database,
    )
