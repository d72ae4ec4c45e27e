"""The peer benchmark's measures, target, Markdown and command line (no Neo4j, no graphiti)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from graphmem.errors import EmbeddingError
from graphmem_bench.bench import peer_graphiti
from graphmem_bench.bench.peer_graphiti import PrecomputedEmbedder
from graphmem_bench.bench.peer_report import (
    PeerOptions,
    PeerReport,
    PeerSizeResult,
    SideResult,
    evaluate_peer_targets,
    mean_overlap,
    p95_ratio,
    render_peer_markdown,
    top_k_overlap,
)
from graphmem_bench.bench.report import (
    EmbedderInfo,
    MachineInfo,
    Percentiles,
    ServerInfo,
    Throughput,
)
from graphmem_bench.cli.benchmark import bench as bench_command


def test_overlap_is_the_share_of_graphmem_hits_whose_edge_graphiti_found() -> None:
    edge_of = {"f1": "e1", "f2": "e2", "f3": "e3", "f4": "e4"}
    assert top_k_overlap(["f1", "f2", "f3", "f4"], ["e4", "e9", "e2"], edge_of) == 0.5
    assert top_k_overlap(["f1", "f2"], ["e1", "e2"], edge_of) == 1.0
    assert top_k_overlap(["f1"], [], edge_of) == 0.0
    # A fact without a known edge never counts as shared.
    assert top_k_overlap(["f1", "unknown"], ["e1"], edge_of) == 0.5
    assert top_k_overlap([], ["e1"], edge_of) is None


def test_mean_overlap_skips_queries_where_graphmem_found_nothing() -> None:
    assert mean_overlap([1.0, None, 0.5, 0.0]) == (0.5, 3)
    assert mean_overlap([None, None]) == (0.0, 0)
    assert mean_overlap([]) == (0.0, 0)


def test_the_ratio_is_graphiti_over_graphmem() -> None:
    assert p95_ratio(300.0, 60.0) == pytest.approx(5.0)
    assert p95_ratio(30.0, 60.0) == pytest.approx(0.5)
    assert p95_ratio(30.0, 0.0) == 0.0


def _side(system: str, size: int, *, rate: float, p50: float, found: float) -> SideResult:
    return SideResult(
        system=system,
        stored=size,
        write=Throughput(items=size, seconds=size / rate, batches=max(1, size // 1_000)),
        search_ms=Percentiles(p50=p50, p95=2 * p50, p99=3 * p50, mean=1.2 * p50, max=4 * p50),
        mean_hits=10.0,
        found_share=found,
    )


def _size(size: int, *, graphmem_p50: float, graphiti_p50: float) -> PeerSizeResult:
    return PeerSizeResult(
        size=size,
        namespace=f"peer-x-{size}",
        group_id=f"peer-x-{size}",
        entities=3_000,
        embedding=Throughput(items=size, seconds=size / 250, batches=size // 1_000),
        queries=200,
        warmup=20,
        k=10,
        graphmem=_side("graphmem", size, rate=900.0, p50=graphmem_p50, found=0.9),
        graphiti=_side("graphiti-core", size, rate=400.0, p50=graphiti_p50, found=0.75),
        overlap=0.62,
        overlap_queries=199,
    )


SMALL = _size(10_000, graphmem_p50=40.0, graphiti_p50=60.0)  # p95s 80 and 120: 1.5x
LARGE = _size(100_000, graphmem_p50=50.0, graphiti_p50=500.0)  # p95s 100 and 1,000: 10x
CLOSE = _size(100_000, graphmem_p50=50.0, graphiti_p50=240.0)  # p95s 100 and 480: 4.8x


def _report(sizes: list[PeerSizeResult], *, server: str = "scratch") -> PeerReport:
    scratch = server == "scratch"
    return PeerReport(
        graphmem_version="0.1.0",
        peer_version="0.31.1",
        started_at=datetime(2026, 3, 1, 12, 0, tzinfo=UTC),
        finished_at=datetime(2026, 3, 1, 13, 0, tzinfo=UTC),
        options=PeerOptions(sizes=tuple(s.size for s in sizes)),
        machine=MachineInfo(cpus=2, platform="Linux-x86_64", python="3.11.9", torch_threads=2),
        server=ServerInfo(
            mode="scratch" if scratch else "configured",
            uri="bolt://127.0.0.1:7999",
            database="neo4j",
            neo4j_version="5.26.30",
            neo4j_edition="community",
            heap="2g" if scratch else None,
            pagecache="1g" if scratch else None,
            kept=not scratch,
        ),
        embedder=EmbedderInfo(
            model_id="sentence-transformers/all-MiniLM-L6-v2",
            dimension=384,
            device="cpu",
            batch_size=64,
        ),
        prefix="peer-20260301T120000Z-abcd",
        sizes=sizes,
        targets=evaluate_peer_targets(sizes),
    )


def test_the_target_applies_from_100k_facts() -> None:
    small, large = evaluate_peer_targets([SMALL, LARGE])
    assert small.status == "n/a" and "100,000" in small.note
    assert small.measured == pytest.approx(1.5)
    assert large.status == "pass" and large.measured == pytest.approx(10.0)
    assert large.threshold == 5.0 and large.comparison == ">="
    (close,) = evaluate_peer_targets([CLOSE])
    assert close.status == "fail" and close.measured == pytest.approx(4.8)
    assert _report([SMALL, LARGE]).passed
    assert not _report([CLOSE]).passed


def test_markdown_shows_writes_latency_ratio_overlap_and_target() -> None:
    text = render_peer_markdown(_report([SMALL, LARGE]))
    assert text.startswith("# graphmem vs graphiti-core 0.31.1 (2026-03-01 12:00 UTC)")
    assert "2 CPUs" in text and "Neo4j 5.26.30 community" in text and "heap 2g" in text
    assert "EDGE_HYBRID_SEARCH_RRF" in text and "no embedding is timed" in text
    assert "| 10,000 | 900 | 400 | 10,000 / 10,000 | 3,000 | 250 |" in text
    assert "| 100,000 | 200 after 20 warm-up | graphmem | 50.0 | 100 | 150 | 200 | 90% |" in text
    assert "|  |  | graphiti-core | 500 | 1,000 | 1,500 | 2,000 | 75% |" in text
    assert "| 10,000 | 1.5x | 62% (199 queries) |" in text
    assert "| 100,000 | 10.0x | 62% (199 queries) |" in text
    assert "| graphiti p95 / graphmem p95 | 100,000 | 10.00 | ≥ 5.00 | PASS |" in text
    assert "| graphiti p95 / graphmem p95 | 10,000 | 1.50 | ≥ 5.00 | n/a (applies from" in text
    assert "deleted after the run" in text
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|"), line


def test_markdown_names_what_stays_in_a_configured_neo4j() -> None:
    text = render_peer_markdown(_report([SMALL], server="configured"))
    assert "configured server" in text and "heap" not in text
    assert "`peer-20260301T120000Z-abcd-*` stay in the configured Neo4j" in text


def test_the_report_round_trips_through_json() -> None:
    report = _report([SMALL, LARGE])
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    assert data["passed"] is True
    assert data["sizes"][1]["p95_ratio"] == pytest.approx(10.0)
    assert data["sizes"][0]["graphiti"]["write"]["per_second"] == pytest.approx(400.0)
    data.pop("passed")
    for size in data["sizes"]:
        size.pop("p95_ratio")
        size["embedding"].pop("per_second")
        for side in ("graphmem", "graphiti"):
            size[side]["write"].pop("per_second")
    assert PeerReport.model_validate(data) == report


def test_options_are_checked() -> None:
    with pytest.raises(ValidationError, match="graphiti"):
        PeerOptions(peer="mem0")
    with pytest.raises(ValidationError, match="at least one size"):
        PeerOptions(sizes=())
    with pytest.raises(ValidationError, match="512m or 2g"):
        PeerOptions(heap="lots")
    assert PeerOptions(sizes=(100_000, 10_000, 10_000)).sizes == (10_000, 100_000)
    assert PeerOptions().k == 10


def test_the_lookup_embedder_returns_only_what_it_was_given() -> None:
    lookup = PrecomputedEmbedder("model/x", 3)
    rows = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32)
    lookup.add(["first question", "second\nquestion"], rows)
    assert lookup.model_id == "model/x" and lookup.dimension == 3
    np.testing.assert_array_equal(lookup.embed(["second question", "first question"]), rows[::-1])
    assert lookup.embed([]).shape == (0, 3)
    with pytest.raises(EmbeddingError, match="no precomputed vector"):
        lookup.embed(["a third question"])


@contextmanager
def _fake_run(report: PeerReport, seen: list[PeerOptions]) -> Iterator[None]:
    def fake(options: PeerOptions, **kwargs: Any) -> PeerReport:
        seen.append(options)
        kwargs["progress"]("working")
        return report

    original = peer_graphiti.run_peer_bench
    peer_graphiti.run_peer_bench = fake  # type: ignore[assignment]
    try:
        yield
    finally:
        peer_graphiti.run_peer_bench = original


def test_the_peer_command_writes_its_own_files(tmp_path: Path) -> None:
    seen: list[PeerOptions] = []
    report = _report([SMALL, LARGE])
    args = ["--peer", "graphiti", "--sizes", "10k,100k", "--queries", "50", "--out", str(tmp_path)]
    with _fake_run(report, seen):
        result = CliRunner().invoke(bench_command, args)
    assert result.exit_code == 0, result.output
    assert seen[0].peer == "graphiti" and seen[0].sizes == (10_000, 100_000)
    assert seen[0].queries == 50 and seen[0].server == "scratch"
    assert "## Comparison" in result.stdout and "[bench] working" in result.stderr
    stem = tmp_path / "peer-graphiti-20260301T120000Z"
    assert json.loads(stem.with_suffix(".json").read_text())["sizes"][1]["size"] == 100_000
    assert stem.with_suffix(".md").read_text() == render_peer_markdown(report)


def test_the_peer_command_can_fail_on_a_missed_target() -> None:
    seen: list[PeerOptions] = []
    with _fake_run(_report([CLOSE], server="configured"), seen):
        result = CliRunner().invoke(
            bench_command,
            ["--peer", "graphiti", "--json", "--server", "configured", "--fail-on-miss"],
        )
    assert result.exit_code == 1
    assert seen[0].server == "configured"
    assert json.loads(result.stdout)["passed"] is False
    assert "group_ids stay there" in result.stderr and "targets missed" in result.stderr


def test_an_unknown_peer_is_refused() -> None:
    result = CliRunner().invoke(bench_command, ["--peer", "mem0"])
    assert result.exit_code == 2 and "--peer" in result.output
    help_text = CliRunner().invoke(bench_command, ["--help"]).output
    assert "--peer" in help_text and "--peer graphiti" in help_text.split("Example:", 1)[1]
