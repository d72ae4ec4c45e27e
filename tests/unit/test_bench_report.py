"""The benchmark's report: targets, Markdown, batch planning and the command line (no Neo4j)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import BaseModel, SecretStr, ValidationError

from graphmem.cli import main
from graphmem.servers.connection import Neo4jTarget
from graphmem.settings import load_settings
from graphmem_bench.bench import runner as bench
from graphmem_bench.bench.render import render_markdown
from graphmem_bench.bench.report import (
    BenchOptions,
    BenchReport,
    CpuUse,
    EmbedderInfo,
    MachineInfo,
    Percentiles,
    RecallLatency,
    ServerInfo,
    SizeResult,
    Throughput,
    cpu_note,
    evaluate_targets,
)
from graphmem_bench.bench.runner import usable_cpus
from graphmem_bench.bench.synthetic import generate_facts
from graphmem_bench.bench.timing import Meter, plan_batches
from graphmem_bench.cli import benchmark as cli_bench
from graphmem_bench.cli.benchmark import bench as bench_command


def _percentiles(p50: float) -> Percentiles:
    return Percentiles(p50=p50, p95=p50 * 2, p99=p50 * 3, mean=p50 * 1.2, max=p50 * 4)


def _size(size: int, *, e2e: float, ceiling: float, neo4j_only: float, db_p50: float) -> SizeResult:
    return SizeResult(
        size=size,
        updates=size // 10,
        messages=size // 10,
        namespaces={"end_to_end": f"bench-x-{size}-end-to-end"},
        embedding_ceiling=Throughput(items=size, seconds=size / ceiling, batches=size // 1_000),
        end_to_end=Throughput(items=size, seconds=size / e2e, batches=size // 1_000),
        end_to_end_embed_seconds=size / ceiling,
        neo4j_only=Throughput(items=size, seconds=size / neo4j_only, batches=size // 1_000),
        episodes=Throughput(items=size // 10, seconds=2.0, batches=1),
        recall=RecallLatency(
            queries=200,
            warmup=20,
            k=10,
            total_ms=_percentiles(30.0),
            embed_ms=_percentiles(8.0),
            db_ms=_percentiles(db_p50),
            stamp_ms=_percentiles(3.0),
            db_stamp_ms=_percentiles(db_p50 + 3.0),
            mean_hits=9.5,
            found_share=0.82,
            exact_fallbacks=1,
        ),
        superseded=size // 10,
        graph_facts=2 * size,
        graph_episodes=size // 10,
    )


def _report(sizes: list[SizeResult], *, server: str = "scratch") -> BenchReport:
    return BenchReport(
        graphmem_version="0.1.0",
        started_at=datetime(2026, 3, 1, 12, 0, tzinfo=UTC),
        finished_at=datetime(2026, 3, 1, 12, 30, tzinfo=UTC),
        options=BenchOptions(sizes=tuple(s.size for s in sizes)),
        machine=MachineInfo(cpus=8, platform="Linux-x86_64", python="3.11.9", torch_threads=8),
        server=ServerInfo(
            mode="scratch" if server == "scratch" else "configured",
            uri="bolt://127.0.0.1:7999",
            database="neo4j",
            neo4j_version="5.26.30",
            neo4j_edition="community",
            heap="2g" if server == "scratch" else None,
            pagecache="1g" if server == "scratch" else None,
            vector_merge_factor=10 if server == "scratch" else None,
            kept=server != "scratch",
        ),
        embedder=EmbedderInfo(
            model_id="sentence-transformers/all-MiniLM-L6-v2",
            dimension=384,
            backend="torch",
            device="cpu",
            batch_size=64,
        ),
        namespace_prefix="bench-20260301T120000Z-abcd",
        sizes=sizes,
        targets=evaluate_targets(sizes),
    )


GOOD_10K = _size(10_000, e2e=900.0, ceiling=1_000.0, neo4j_only=6_000.0, db_p50=5.0)
BAD_100K = _size(100_000, e2e=700.0, ceiling=1_000.0, neo4j_only=4_000.0, db_p50=15.0)


def test_targets_pass_fail_and_not_applicable() -> None:
    targets = {(t.name, t.size): t for t in evaluate_targets([GOOD_10K, BAD_100K])}
    assert len(targets) == 6
    ratio = targets[("end-to-end / embedding ceiling", 10_000)]
    assert ratio.status == "pass" and ratio.measured == pytest.approx(0.9)
    assert targets[("end-to-end / embedding ceiling", 100_000)].status == "fail"
    assert targets[("Neo4j-only writes", 10_000)].status == "pass"
    assert targets[("Neo4j-only writes", 100_000)].measured == pytest.approx(4_000.0)
    assert targets[("Neo4j-only writes", 100_000)].status == "fail"
    small = targets[("recall db p95", 10_000)]
    assert small.status == "n/a" and "100,000" in small.note
    large = targets[("recall db p95", 100_000)]
    assert large.status == "fail" and large.measured == pytest.approx(30.0)


def test_targets_at_their_boundaries_pass() -> None:
    edge = _size(100_000, e2e=850.0, ceiling=1_000.0, neo4j_only=5_000.0, db_p50=12.5)
    assert [t.status for t in evaluate_targets([edge])] == ["pass", "pass", "pass"]
    assert _report([edge]).passed


def test_a_ceiling_slower_than_the_embedding_inside_end_to_end_is_flagged() -> None:
    # The bench's ceiling fell to 4.75 ms per text under CPU steal while the embedding inside
    # the end-to-end phase took 4.05 ms: the ratio (0.92) is flattered.
    flattered = _size(10_000, e2e=194.0, ceiling=211.0, neo4j_only=857.0, db_p50=30.0)
    flattered = flattered.model_copy(update={"end_to_end_embed_seconds": 40.5})
    ratio = evaluate_targets([flattered])[0]
    assert ratio.status == "pass" and ratio.measured == pytest.approx(194 / 211)
    assert ratio.note == "ceiling suspect: 4.74 ms per text alone, 4.05 ms inside end-to-end"
    text = render_markdown(_report([flattered]))
    assert (
        "| end-to-end / embedding ceiling | 10,000 | 0.92 | ≥ 0.75 | PASS (ceiling suspect: "
        "4.74 ms per text alone, 4.05 ms inside end-to-end) |"
    ) in text
    # Embedding inside end-to-end as fast as alone, or slower, raises no doubt.
    assert evaluate_targets([GOOD_10K])[0].note == ""
    slower = GOOD_10K.model_copy(update={"end_to_end_embed_seconds": 12.0})
    assert evaluate_targets([slower])[0].note == ""


def _with_cpu(r: SizeResult, *, e2e_ms: float, neo4j_ms: float, embed_ms: float) -> SizeResult:
    """``r`` with the CPU per fact of each phase (client, server) in milliseconds."""

    def use(phase: Throughput, client_ms: float, server_ms: float | None) -> Throughput:
        cpu = CpuUse(
            client_seconds=client_ms * phase.items / 1000,
            server_seconds=None if server_ms is None else server_ms * phase.items / 1000,
            server_after_seconds=None if server_ms is None else 0.1 * phase.items / 1000,
        )
        return phase.model_copy(update={"cpu": cpu})

    return r.model_copy(
        update={
            "embedding_ceiling": use(r.embedding_ceiling, embed_ms, 0.0),
            "end_to_end": use(r.end_to_end, e2e_ms - 0.5, 0.5),
            "neo4j_only": use(r.neo4j_only, 0.05, neo4j_ms - 0.05),
        }
    )


def test_a_missed_throughput_target_says_how_busy_the_cpus_were() -> None:
    # 2 CPUs; ceiling 1.00 ms per text, so 0.75 allows 1.33 ms per fact, or 2.67 ms of CPU.
    # End-to-end took 1.43 ms per fact (0.70) with 2.80 ms of CPU: 1.96 CPUs busy.
    bad = _with_cpu(BAD_100K, e2e_ms=2.80, neo4j_ms=0.45, embed_ms=1.97)
    ratio, writes, _ = evaluate_targets([bad], cpus=2)
    assert ratio.status == "fail"
    assert ratio.note == (
        "CPU-bound: 1.96 of 2 CPUs busy; 2.80 ms CPU per fact, the target allows 2.67 at most"
    )
    # 4,000 facts/s is 0.25 ms per fact; 0.45 ms of CPU is 1.8 CPUs; 5,000/s allows 0.40.
    assert writes.status == "fail"
    assert writes.note == (
        "CPU-bound: 1.80 of 2 CPUs busy; 0.45 ms CPU per fact, the target allows 0.40 at most"
    )
    # With 3 CPUs the same phases used less CPU per fact than the targets allow: what they
    # missed was CPU time left idle.
    ratio, writes, _ = evaluate_targets([bad], cpus=3)
    assert ratio.note == (
        "1.96 of 3 CPUs busy; 2.80 ms CPU per fact is within the 4.00 the target allows, "
        "the CPUs were idle part of the time"
    )
    assert writes.note.startswith("1.80 of 3 CPUs busy; 0.45 ms CPU per fact is within the 0.60")
    # Over the allowance but with CPUs idle: not CPU-bound, and still too much CPU per fact.
    busy_less = bad.model_copy(
        update={"neo4j_only": bad.neo4j_only.model_copy(update={"seconds": 50.0})}
    )
    writes = evaluate_targets([busy_less], cpus=2)[1]
    assert writes.note == (
        "0.90 of 2 CPUs busy; 0.45 ms CPU per fact, the target allows 0.40 at most"
    )
    # Met targets, an unknown machine or unknown server CPU add nothing.
    good = _with_cpu(GOOD_10K, e2e_ms=2.0, neo4j_ms=0.3, embed_ms=1.9)
    assert [t.note for t in evaluate_targets([good], cpus=2)[:2]] == ["", ""]
    assert [t.note for t in evaluate_targets([bad])[:2]] == ["", ""]
    unknown = bad.neo4j_only.model_copy(update={"cpu": CpuUse(client_seconds=1.0)})
    assert unknown.cpus_busy is None and cpu_note(unknown, 0.2, 2) == ""


def test_markdown_shows_the_cpu_per_fact_of_each_phase() -> None:
    bad = _with_cpu(BAD_100K, e2e_ms=2.80, neo4j_ms=0.45, embed_ms=1.97)
    report = _report([bad]).model_copy(
        update={"machine": MachineInfo(cpus=2, platform="Linux", python="3.11.9")}
    )
    text = render_markdown(report)
    assert "CPU per item (ms) on 2 CPUs:" in text
    assert "| 100,000 | embedding ceiling | 1.00 | 1.97 | 0.00 | 0.10 | 1.97 |" in text
    assert "| 100,000 | end-to-end | 1.43 | 2.30 | 0.50 | 0.10 | 1.96 |" in text
    assert "| 100,000 | Neo4j-only | 0.25 | 0.05 | 0.40 | 0.10 | 1.80 |" in text
    # A report without CPU figures (a configured server's, or an older JSON) has no such table.
    assert "CPU per item" not in render_markdown(_report([BAD_100K]))


def test_the_meter_sums_wall_and_cpu_over_the_timed_calls_only() -> None:
    # graphmem reads CPU time from /proc (Linux); without it this is a failure, never a skip.
    assert Path("/proc/self/stat").exists(), "no /proc on this system: these readings need Linux"
    meter = Meter(os.getpid())  # this process stands in for the server
    with meter.timing():
        sum(i * i for i in range(3_000_000))  # spend some CPU
    sum(i * i for i in range(3_000_000))  # untimed
    with meter.timing():
        pass
    phase = meter.throughput(items=10, batches=2)
    assert phase.cpu is not None and phase.cpu.server_seconds is not None
    assert 0 < phase.seconds < 5
    assert 0 < phase.cpu.client_seconds <= phase.seconds * 1.5
    # /proc counts in clock ticks (usually 10 ms): the server reading is coarser
    assert phase.cpu.server_seconds == pytest.approx(phase.cpu.client_seconds, abs=0.05)
    # Client and server are one process here, so it counts twice; on a loaded machine the
    # loop gets less than a whole core.
    assert phase.cpus_busy is not None and 0 < phase.cpus_busy <= 2.5
    unknown = Meter(None)
    with unknown.timing():
        pass
    assert unknown.throughput(1, 1).cpu == CpuUse(client_seconds=unknown.client)
    assert unknown.throughput(1, 1).cpus_busy is None


def test_the_report_passes_only_without_failures() -> None:
    assert _report([GOOD_10K]).passed
    assert not _report([GOOD_10K, BAD_100K]).passed


def test_markdown_shows_setup_throughput_latency_and_targets() -> None:
    text = render_markdown(_report([GOOD_10K, BAD_100K]))
    assert text.startswith("# graphmem bench (2026-03-01 12:00 UTC)")
    assert "8 CPUs" in text and "Neo4j 5.26.30 community" in text
    assert "(throwaway local server at bolt://127.0.0.1:7999, heap 2g, page cache 1g, " in text
    assert "vector merge factor 10)" in text
    assert "all-MiniLM-L6-v2 (384-d, torch on cpu, batch 64)" in text
    assert "untimed warm-up 20,000 facts" in text
    assert (
        "| 10,000 | 1,000 | 900 | 0.90 | 6,000 | - | - | 500 (1,000 msgs) | 1,000 of 1,000 |"
        in (text)
    )
    assert "| 100,000 | 1,000 | 700 | 0.70 | 4,000 |" in text
    assert "| 100,000 | 200 after 20 warm-up | total | 30.0 | 60.0 | 90.0 | 120 |" in text
    assert "|  |  | db | 15.0 | 30.0 | 45.0 | 60.0 |" in text
    assert "|  |  | db + stamp | 18.0 | 36.0 | 54.0 | 72.0 |" in text
    assert "| recall db p95 | 100,000 | 30.0 ms | ≤ 25.0 ms | FAIL |" in text
    assert "| recall db p95 | 10,000 | 10.0 ms | ≤ 25.0 ms | n/a (applies from 100,000" in text
    assert "| Neo4j-only writes | 10,000 | 6,000 facts/s | ≥ 5,000 facts/s | PASS |" in text
    assert "| end-to-end / embedding ceiling | 100,000 | 0.70 | ≥ 0.75 | FAIL |" in text
    assert (
        "- 10,000 facts: end-to-end 1.11 ms per fact = 1.00 ms embedding + 0.11 ms validation "
        "and Neo4j; ceiling 1.00 ms per text; Neo4j-only 0.17 ms per fact"
    ) in text
    assert "answer found in 82%" in text and "exact fallback in 1 of 200" in text
    assert "deleted after the run" in text
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|"), line


def test_the_neo4j_only_writes_are_held_to_the_bare_baseline() -> None:
    cpu = CpuUse(client_seconds=1.2, server_seconds=13.0)
    near = GOOD_10K.model_copy(
        update={
            "neo4j_only": Throughput(items=10_000, seconds=10.0, batches=10, cpu=cpu),
            "bare": Throughput(
                items=10_000,
                seconds=8.0,
                batches=10,
                cpu=CpuUse(client_seconds=0.4, server_seconds=9.0),
            ),
        }
    )
    assert near.bare_ratio == pytest.approx(0.8)
    targets = {t.name: t for t in evaluate_targets([near])}
    bare = targets["Neo4j-only / bare"]
    assert (bare.status, bare.threshold, bare.unit) == ("fail", 0.9, "ratio")
    assert bare.note == (
        "CPU per fact: Neo4j-only 0.12 ms client + 1.30 ms server, bare 0.04 ms client + "
        "0.90 ms server"
    )
    assert list(targets) == [
        "end-to-end / embedding ceiling",
        "Neo4j-only writes",
        "Neo4j-only / bare",
        "recall db p95",
    ]
    text = render_markdown(_report([near]))
    assert "| 10,000 | 1,000 | 900 | 0.90 | 1,000 | 1,250 | 0.80 | 500 (1,000 msgs) |" in text
    assert "| Neo4j-only / bare | 10,000 | 0.80 | ≥ 0.90 | FAIL (CPU per fact: " in text
    assert "Neo4j-only 1.00 ms per fact, bare 0.80 ms per fact" in text
    assert "| 10,000 | bare | 0.80 | 0.04 | 0.90 | - |" in text
    at = near.model_copy(update={"bare": Throughput(items=10_000, seconds=9.0, batches=10)})
    passed = {t.name: t for t in evaluate_targets([at])}["Neo4j-only / bare"]
    assert passed.status == "pass" and passed.note == ""
    # The ratio is judged on the exact figure: 0.8996 shows as such beside FAIL.
    short = near.model_copy(update={"bare": Throughput(items=10_000, seconds=8.996, batches=10)})
    assert "| Neo4j-only / bare | 10,000 | 0.8996 | ≥ 0.90 | FAIL" in render_markdown(
        _report([short])
    )


def test_a_figure_just_short_of_its_target_is_not_rounded_onto_it() -> None:
    """Rounded as usual, 0.7496, 4,999.6 facts/s and 25.04 ms would show as 0.75, 5,000 and
    25.0 beside FAIL: each gets the decimals that show which side of the threshold it is on."""
    near = _size(100_000, e2e=749.6, ceiling=1_000.0, neo4j_only=4_999.6, db_p50=12.52)
    assert [t.status for t in evaluate_targets([near])] == ["fail", "fail", "fail"]
    text = render_markdown(_report([near]))
    assert "| end-to-end / embedding ceiling | 100,000 | 0.7496 | ≥ 0.75 | FAIL |" in text
    assert "| Neo4j-only writes | 100,000 | 4,999.6 facts/s | ≥ 5,000 facts/s | FAIL |" in text
    assert "| recall db p95 | 100,000 | 25.04 ms | ≤ 25.0 ms | FAIL |" in text
    # Just over a minimum, or just under a maximum, rounding onto the threshold is right.
    edge = _size(100_000, e2e=750.4, ceiling=1_000.0, neo4j_only=5_000.4, db_p50=12.48)
    text = render_markdown(_report([edge]))
    assert "| end-to-end / embedding ceiling | 100,000 | 0.75 | ≥ 0.75 | PASS |" in text
    assert "| Neo4j-only writes | 100,000 | 5,000 facts/s | ≥ 5,000 facts/s | PASS |" in text
    assert "| recall db p95 | 100,000 | 25.0 ms | ≤ 25.0 ms | PASS |" in text


def test_markdown_names_the_namespaces_left_in_a_configured_neo4j() -> None:
    text = render_markdown(_report([GOOD_10K], server="configured"))
    assert "configured server" in text
    assert "stay in the configured Neo4j: `bench-20260301T120000Z-abcd-*`" in text
    assert "heap" not in text and "merge factor" not in text


def test_the_report_round_trips_through_json() -> None:
    report = _report([GOOD_10K, BAD_100K])
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    assert data["passed"] is False
    assert data["sizes"][0]["end_to_end_ratio"] == pytest.approx(0.9)
    assert data["sizes"][0]["neo4j_only"]["per_second"] == pytest.approx(6_000.0)
    data.pop("passed")
    for size in data["sizes"]:
        size.pop("end_to_end_ratio")
        for phase in ("embedding_ceiling", "end_to_end", "neo4j_only", "episodes"):
            size[phase].pop("per_second")
    assert BenchReport.model_validate(data) == report


def test_percentiles_are_ordered() -> None:
    values = [float(v) for v in range(1, 101)]
    p = Percentiles.of(values)
    assert p.p50 <= p.p95 <= p.p99 <= p.max
    assert p.p50 == pytest.approx(50.5) and p.max == 100.0 and p.mean == pytest.approx(50.5)
    assert Percentiles.of([]).p99 == 0.0


def test_options_are_checked() -> None:
    with pytest.raises(ValidationError, match="at least one size"):
        BenchOptions(sizes=())
    with pytest.raises(ValidationError, match="positive"):
        BenchOptions(sizes=(10, 0))
    with pytest.raises(ValidationError, match="512m or 2g"):
        BenchOptions(heap="lots")
    assert BenchOptions(pagecache="2G").pagecache == "2g"
    assert BenchOptions(sizes=(100_000, 10_000, 10_000)).sizes == (10_000, 100_000)


@pytest.mark.parametrize("batch_size", [1, 7, 100, 1_000, 5_000])
def test_batches_write_every_fact_once_after_what_it_replaces(batch_size: int) -> None:
    facts = generate_facts(2_000, seed=21)
    batches = plan_batches(facts, batch_size)
    order = [i for batch in batches for i in batch]
    assert sorted(order) == list(range(len(facts)))
    assert all(1 <= len(batch) <= batch_size for batch in batches)
    batch_of = {i: n for n, batch in enumerate(batches) for i in batch}
    for fact in facts:
        if fact.updates is not None:
            assert batch_of[fact.updates] < batch_of[fact.index]
    depth = [0] * len(facts)
    for fact in facts:
        depth[fact.index] = 0 if fact.updates is None else depth[fact.updates] + 1
    assert len(batches) <= -(-len(facts) // batch_size) + max(depth)


def test_batches_keep_the_order_when_nothing_waits() -> None:
    facts = generate_facts(500, seed=1, update_share=0.0)
    assert plan_batches(facts, 200) == [
        list(range(200)),
        list(range(200, 400)),
        list(range(400, 500)),
    ]
    assert plan_batches([], 10) == []
    with pytest.raises(ValueError, match="at least 1"):
        plan_batches(facts, 0)


def test_run_bench_refuses_a_target_for_a_scratch_server() -> None:
    target = Neo4jTarget(uri="bolt://x:1", user="neo4j", password=SecretStr("x"))
    with pytest.raises(ValueError, match="configured"):
        bench.run_bench(BenchOptions(), settings=load_settings(), target=target)


@contextmanager
def _fake_run(report: BenchReport, seen: list[BenchOptions]) -> Iterator[None]:
    def fake(options: BenchOptions, **kwargs: Any) -> BenchReport:
        seen.append(options)
        kwargs["progress"]("working")
        return report

    original = bench.run_bench
    bench.run_bench = fake  # type: ignore[assignment]
    try:
        yield
    finally:
        bench.run_bench = original


def test_the_command_prints_markdown_and_writes_files(tmp_path: Path) -> None:
    seen: list[BenchOptions] = []
    report = _report([GOOD_10K])
    with _fake_run(report, seen):
        result = CliRunner().invoke(
            bench_command,
            [
                "--sizes",
                "2k,10_000",
                "--queries",
                "5",
                "--batch-size",
                "250",
                "--out",
                str(tmp_path),
            ],
        )
    assert result.exit_code == 0, result.output
    assert seen[0].sizes == (2_000, 10_000) and seen[0].queries == 5
    assert seen[0].batch_size == 250 and seen[0].server == "scratch"
    assert seen[0].warmup_facts == 20_000
    assert "## Targets" in result.stdout and "[bench] working" in result.stderr
    written = json.loads((tmp_path / "bench-20260301T120000Z.json").read_text())
    assert written["sizes"][0]["size"] == 10_000
    assert (tmp_path / "bench-20260301T120000Z.md").read_text() == render_markdown(report)


def test_the_command_prints_json_and_can_fail_on_a_missed_target() -> None:
    seen: list[BenchOptions] = []
    with _fake_run(_report([GOOD_10K, BAD_100K], server="configured"), seen):
        result = CliRunner().invoke(
            bench_command, ["--json", "--server", "configured", "--fail-on-miss"]
        )
    assert result.exit_code == 1
    assert seen[0].server == "configured" and seen[0].sizes == (10_000, 100_000)
    assert json.loads(result.stdout)["passed"] is False
    assert "stay there" in result.stderr and "targets missed" in result.stderr


def test_the_command_refuses_bad_sizes_and_has_an_example(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the run started")

    monkeypatch.setattr(bench, "run_bench", refuse)
    for sizes in ("ten", "inf", "1e400", "nan", "0.5", "20m", "1.5", "1000,2500.7", "1.0005k"):
        result = CliRunner().invoke(bench_command, ["--sizes", sizes])
        assert result.exit_code == 2 and "--sizes" in result.output, (sizes, result.output)
        assert "counts from 1 to 10,000,000" in result.output
    no_context: Any = None  # the callback does not read its context or parameter
    parsed = cli_bench._sizes(no_context, no_context, "1.1k, 2.5m,1e3,10_000")
    assert parsed == (1_100, 2_500_000, 1_000, 10_000)
    help_text = CliRunner().invoke(bench_command, ["--help"]).output
    assert "Example:" in help_text and "graphmem bench" in help_text.split("Example:", 1)[1]


def test_the_command_checks_its_options_before_it_runs(tmp_path: Path) -> None:
    # A bad memory size, or an --out that cannot be written, fails before any work.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    seen: list[BenchOptions] = []
    with _fake_run(_report([GOOD_10K]), seen):
        for args, option in (
            (["--heap", "2x"], "--heap"),
            (["--pagecache", "lots"], "--pagecache"),
            (["--out", str(blocker / "results")], "--out"),
        ):
            result = CliRunner().invoke(bench_command, args)
            assert result.exit_code == 2 and option in result.output, result.output
            assert "Traceback" not in result.output
    assert seen == []


def test_a_report_that_cannot_be_written_is_printed_first(tmp_path: Path) -> None:
    # The directory is writable when the run starts and gone when it ends.
    out = tmp_path / "results"
    report = _report([GOOD_10K])

    def fake(options: BenchOptions, **kwargs: Any) -> BenchReport:
        out.rmdir()
        out.write_text("")  # now a file: the report's files cannot go there
        return report

    original = bench.run_bench
    bench.run_bench = fake  # type: ignore[assignment]
    try:
        result = CliRunner().invoke(main, ["bench", "--json", "--out", str(out)])
    finally:
        bench.run_bench = original
    assert result.exit_code == 1
    assert json.loads(result.stdout)["sizes"][0]["size"] == 10_000
    error = json.loads(result.stderr)["error"]
    assert error["type"] == "ConfigurationError" and "printed above" in error["message"]


def test_usable_cpus_follow_the_affinity_mask_and_a_cgroup_quota(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    cpu_max = tmp_path / "cpu.max"
    assert usable_cpus(cpu_max) == 4  # no cgroup file: the affinity mask
    cpu_max.write_text("max 100000\n")
    assert usable_cpus(cpu_max) == 4  # no quota
    cpu_max.write_text("150000 100000\n")
    assert usable_cpus(cpu_max) == 2  # 1.5 CPUs of quota, rounded up
    cpu_max.write_text("800000 100000\n")
    assert usable_cpus(cpu_max) == 4  # a quota above the mask
    cpu_max.write_text("5000 100000\n")
    assert usable_cpus(cpu_max) == 1


def _ceiling(backend: str, precision: str, per_second: float, cos: float | None) -> Any:
    from graphmem_bench.bench.report import BackendCeiling

    return BackendCeiling(
        backend=backend,
        precision=precision,
        model_id=f"m@{precision}",
        ceiling=Throughput(items=1000, seconds=1000 / per_second, batches=1),
        cosine_mean=cos,
        cosine_min=None if cos is None else cos - 0.015,
    )


def test_the_backends_are_held_to_twice_torch_and_its_vectors() -> None:
    from graphmem_bench.bench.report import BackendComparison, backend_targets

    comparison = BackendComparison(
        texts=1000,
        backends=[
            _ceiling("torch", "fp32", 300.0, None),
            _ceiling("onnx", "fp32", 400.0, 1.0),
            _ceiling("onnx", "int8", 900.0, 0.993),
        ],
    )
    speed, mean, least = backend_targets(comparison)
    assert (speed.measured, speed.status) == (3.0, "pass")
    assert (mean.status, least.status) == ("pass", "pass")
    slow = comparison.model_copy(
        update={"backends": [*comparison.backends[:2], _ceiling("onnx", "int8", 500.0, 0.989)]}
    )
    speed, mean, least = backend_targets(slow)
    assert (speed.status, mean.status, least.status) == ("fail", "fail", "pass")
    # Without torch there is nothing to hold the ONNX backend to.
    alone = BackendComparison(texts=10, backends=comparison.backends[1:], skipped="no torch")
    assert backend_targets(alone) == [] and backend_targets(None) == []
    text = render_markdown(
        _report([GOOD_10K]).model_copy(
            update={"backends": comparison, "targets": backend_targets(comparison)}
        )
    )
    assert "| onnx int8 | m@int8 | 900 | 3.00x | 0.9930 / 0.9780 |" in text
    assert "| ONNX int8 / torch texts/s | 1,000 | 3.00 | ≥ 2.00 | PASS |" in text
    assert "| ONNX int8 cosine to torch, mean | 1,000 | 0.9930 | ≥ 0.99 | PASS |" in text


def test_the_startup_targets_and_report() -> None:
    from datetime import UTC, datetime

    from graphmem_bench.bench.report import MachineInfo
    from graphmem_bench.bench.startup import (
        CommandCost,
        StartupOptions,
        StartupReport,
        render_startup_markdown,
        startup_targets,
    )

    def cost(command: str, backend: Any, cpu: float, wall: float, rss: float) -> CommandCost:
        return CommandCost(
            command=command, backend=backend, runs=3, cpu_seconds=cpu, wall_seconds=wall,
            peak_rss_mb=rss,
        )  # fmt: skip

    results = [
        cost("graphmem --help", None, 0.3, 0.3, 40),
        cost("graphmem recall", "onnx", 1.2, 1.4, 180),
        cost("graphmem mcp: tools/list", "onnx", 1.1, 1.2, 160),
        cost("graphmem recall", "torch", 9.0, 9.1, 1040),
    ]
    cpu, rss, listed = startup_targets(results)
    assert (cpu.status, rss.status, listed.status) == ("pass", "pass", "pass")
    heavy = [*results[:1], cost("graphmem recall", "onnx", 2.5, 2.6, 500), results[2]]
    assert [t.status for t in startup_targets(heavy)] == ["fail", "fail", "pass"]
    report = StartupReport(
        graphmem_version="0",
        started_at=datetime(2026, 3, 1, 12, tzinfo=UTC),
        finished_at=datetime(2026, 3, 1, 12, 5, tzinfo=UTC),
        options=StartupOptions(),
        machine=MachineInfo(cpus=2, platform="Linux", python="3.11"),
        onnx_build_seconds=4.2,
        results=results,
        targets=startup_targets(results),
    )
    text = render_startup_markdown(report)
    assert "| graphmem recall | onnx | 1.20 | 1.40 | 180 |" in text
    assert "| graphmem recall | torch | 9.00 | 9.10 | 1040 |" in text
    assert "built the ONNX graph in 4.2 s" in text
    assert "| one-shot recall CPU | 1.20 s | <= 2 s | pass |" in text


class _Ran(BaseModel):
    """A report as every benchmark's has it: its start, whether it passed, its targets."""

    started_at: datetime = datetime(2026, 3, 1, 12, tzinfo=UTC)
    passed: bool = False
    targets: list[Any] = []


@pytest.mark.parametrize(
    ("flags", "kind", "stem", "fails"),
    [
        ([], "speed", "bench", True),
        (["--startup", "--runs", "2"], "startup", "startup", True),
        (["--mcp"], "mcp", "mcp", False),  # no target: --fail-on-miss has nothing to fail on
        (["--consolidation"], "consolidation", "consolidation", True),
        (["--peer", "graphiti"], "peer", "peer-graphiti", True),
        (["--tenants", "5x20"], "tenants", "tenants", True),
    ],
)
def test_each_benchmark_runs_and_reports_through_one_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    kind: str,
    stem: str,
    fails: bool,
) -> None:
    called: list[tuple[str, int]] = []

    def run(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
        called.append((type(options).__name__, runs))
        return _Ran(), f"# {kind}\n"

    monkeypatch.setitem(cli_bench._KINDS, kind, run)
    args = [*flags, "--out", str(tmp_path), "--fail-on-miss"]
    result = CliRunner().invoke(bench_command, args)
    assert result.exit_code == (1 if fails else 0), result.output
    runs = 2 if "--runs" in flags else 3  # the default
    options = {"peer": "PeerOptions", "tenants": "TenantsOptions"}.get(kind, "BenchOptions")
    assert called == [(options, runs)]
    assert (tmp_path / f"{stem}-20260301T120000Z.md").read_text() == f"# {kind}\n"
    assert ("targets missed" in result.stderr) is fails
    for pair in (["--mcp", "--startup"], ["--tenants", "2x3", "--consolidation"]):
        both = CliRunner().invoke(bench_command, pair)
        assert both.exit_code == 2 and "different benchmarks" in both.output
