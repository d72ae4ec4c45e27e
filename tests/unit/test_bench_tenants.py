"""The multi-tenant benchmark's pure parts: the overlap with the exact ranking, the exact
ranking itself, the data, the report and the command line (no Neo4j)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from graphmem.testing import StatementTime
from graphmem_bench.bench import tenants
from graphmem_bench.bench.report import (
    EmbedderInfo,
    MachineInfo,
    Percentiles,
    ServerInfo,
    Throughput,
)
from graphmem_bench.bench.tenants import perturbed, pool_facts
from graphmem_bench.bench.tenants_compare import (
    TenantsComparison,
    comparison_targets,
    render_comparison_markdown,
)
from graphmem_bench.bench.tenants_report import (
    RECALL_HEADER,
    BareRead,
    NamespaceFigures,
    RecallFigures,
    TenantsOptions,
    TenantsReport,
    bare_rows,
    exact_rankings,
    exact_top_share,
    recall_rows,
    render_tenants_markdown,
    tenant_targets,
)
from graphmem_bench.bench.tenants_statements import statement_figures
from graphmem_bench.cli.benchmark import bench as bench_command


# --- exact top 5 in the top 10 --------------------------------------------------------------------
def test_the_whole_exact_top_five_among_the_first_ten_hits_counts_as_found() -> None:
    exact = ["a", "b", "c", "d", "e", "f", "g"]
    hits = ["x", "e", "y", "d", "c", "z", "b", "w", "v", "a"]  # all five, the last at rank 10
    assert exact_top_share(hits, exact) == 1.0
    # Past the tenth hit does not count; the exact ranking's sixth and later do not matter.
    late = ["x", "e", "y", "d", "c", "z", "b", "w", "v", "u", "a"]
    assert exact_top_share(late, exact) == pytest.approx(4 / 5)
    assert exact_top_share(["f", "g", "h"], exact) == 0.0
    assert exact_top_share(["a", "f", "g"], exact) == pytest.approx(1 / 5)
    # Order does not matter, and fewer hits than ten are fine.
    assert exact_top_share(["e", "d", "c", "b", "a"], exact) == 1.0


def test_the_overlap_of_a_small_exact_ranking_and_other_sizes() -> None:
    assert exact_top_share(["a", "b"], ["b", "a"]) == 1.0  # a namespace of two facts
    assert exact_top_share(["a"], ["b", "a"]) == 0.5
    assert exact_top_share([], ["a"]) == 0.0
    assert exact_top_share(["a"], []) == 1.0  # nothing to find
    assert exact_top_share(["a", "b", "c"], ["c", "b", "a"], top=1, within=2) == 0.0
    assert exact_top_share(["a", "b", "c"], ["c", "b", "a"], top=1, within=3) == 1.0


def test_the_exact_ranking_is_by_cosine_best_first() -> None:
    vectors = np.array(
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0], [3.0, 0.1, 0.0]],
        dtype=np.float32,
    )
    queries = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.1]], dtype=np.float32)
    # Row 4 is long but not as close in angle as row 0; lengths do not count.
    assert exact_rankings(vectors, queries, top=3) == [[0, 4, 2], [1, 2, 3]]
    assert exact_rankings(vectors, queries[:1], top=10) == [[0, 4, 2, 1, 3]]
    assert exact_rankings(np.zeros((0, 3), np.float32), queries) == [[], []]
    # Ties keep the earlier row first.
    twins = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    assert exact_rankings(twins, np.array([[1.0, 0.0]], np.float32), top=2) == [[1, 2]]


def test_the_figures_of_a_run_come_from_the_overlap_of_each_query() -> None:
    # Three queries: every exact top-5 fact found, four of five, none.
    shares = [
        exact_top_share(list("abcdefghij"), list("abcde")),
        exact_top_share(list("abcdxyzuvw"), list("abcde")),
        exact_top_share(list("vwxyz"), list("abcde")),
    ]
    assert shares == [1.0, 0.8, 0.0]
    assert sum(s == 1.0 for s in shares) / 3 == pytest.approx(1 / 3)  # exact_top_all
    assert sum(shares) / 3 == pytest.approx(0.6)  # exact_top_mean


# --- the data -------------------------------------------------------------------------------------
def test_the_pool_holds_distinct_texts_in_order() -> None:
    pool = pool_facts(400, seed=3)
    assert len(pool) == 400 and len({f.text for f in pool}) == 400
    assert [f.index for f in pool] == list(range(400))
    assert all(f.updates is None for f in pool)
    assert [f.text for f in pool_facts(150, seed=3)] == [f.text for f in pool[:150]]


def test_each_copy_is_near_its_pool_vector_and_seeded() -> None:
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((200, 384))
    pool = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    copy = perturbed(pool, 0.1, (0, 3))
    assert copy.dtype == np.float32 and copy.shape == pool.shape
    assert np.allclose(np.linalg.norm(copy, axis=1), 1.0, atol=1e-6)
    cosines = np.sum(copy * pool, axis=1)
    assert abs(float(cosines.mean()) - 1 / np.sqrt(1.01)) < 0.002 and cosines.min() > 0.98
    assert np.array_equal(copy, perturbed(pool, 0.1, (0, 3)))  # the same seed, the same copy
    other = perturbed(pool, 0.1, (0, 4))  # another namespace's copy differs from this one
    assert not np.array_equal(copy, other) and float(np.sum(copy * other, axis=1).min()) > 0.97
    assert np.array_equal(perturbed(pool, 0.0, (0, 3)), pool)


def test_the_options_size_the_pool_and_the_run() -> None:
    options = TenantsOptions(namespaces=1_000, facts=1_000)
    assert options.large == 100_000 and options.small == 50 and options.queries == 100
    assert options.pool_size == 5_000
    assert options.total_facts == 1_000_000 + 100_000 + 50
    assert TenantsOptions(namespaces=2, facts=8_000).pool_size == 8_000  # M above the pool
    assert TenantsOptions(namespaces=2, facts=5, small=6_000).pool_size == 6_000
    with pytest.raises(ValidationError):
        TenantsOptions(namespaces=0)
    with pytest.raises(ValidationError):
        TenantsOptions(noise=2.0)


# --- the report -----------------------------------------------------------------------------------
def _p(p50: float) -> Percentiles:
    return Percentiles(p50=p50, p95=p50 * 2, p99=p50 * 3, mean=p50, max=p50 * 4)


def _figures(mode: Any, db: float, share: float) -> RecallFigures:
    return RecallFigures(
        mode=mode,
        queries=100,
        warmup=20,
        db_ms=_p(db),
        client_ms=_p(db + 30),
        embed_ms=_p(20.0),
        exact_top_all=share,
        exact_top_mean=(1 + share) / 2,
        mean_hits=10.0,
        widened=7,
        exact_fallbacks=3,
    )


def _report(version: str = "5.26.30", large_db: float = 10.0) -> TenantsReport:
    namespaces = [
        NamespaceFigures(
            name="small",
            ns="bench-tenants-x-small",
            facts=50,
            recalls=[_figures("default", 30.0, 0.92), _figures("vector", 40.0, 1.0)],
        ),
        NamespaceFigures(
            name="large",
            ns="bench-tenants-x-large",
            facts=100_000,
            recalls=[_figures("default", large_db, 0.85), _figures("vector", 8.0, 0.975)],
        ),
    ]
    return TenantsReport(
        graphmem_version="0.1.0",
        started_at=datetime(2026, 3, 1, 12, tzinfo=UTC),
        finished_at=datetime(2026, 3, 1, 13, tzinfo=UTC),
        options=TenantsOptions(),
        machine=MachineInfo(cpus=2, platform="Linux", python="3.11"),
        server=ServerInfo(
            mode="scratch",
            uri="bolt://127.0.0.1:7999",
            database="neo4j",
            neo4j_version=version,
            neo4j_edition="community",
            heap="2g",
            pagecache="1g",
            vector_merge_factor=10,
            kept=False,
        ),
        embedder=EmbedderInfo(
            model_id="sentence-transformers/all-MiniLM-L6-v2@int8",
            dimension=384,
            device="cpu",
            backend="onnx",
        ),
        namespace_prefix="bench-tenants-x",
        pool_texts=100_000,
        pool_embedding=Throughput(items=100_000, seconds=250.0, batches=100),
        load=Throughput(items=1_100_050, seconds=2_200.1, batches=1_102),
        graph_facts=1_100_050,
        namespaces=namespaces,
        targets=tenant_targets(namespaces),
        load_average=(9.94, 7.5),
    )


def test_only_the_large_namespace_is_held_to_the_recall_target() -> None:
    (target,) = _report().targets
    assert target.name == "recall db p95, large namespace among tenants"
    assert (target.size, target.measured, target.status) == (100_000, 20.0, "pass")
    (slow,) = _report(large_db=15.0).targets
    assert slow.status == "fail" and not _report(large_db=15.0).passed


def test_the_markdown_names_the_server_the_data_and_each_recall() -> None:
    text = render_tenants_markdown(_report())
    assert text.startswith("# graphmem bench --tenants (2026-03-01 12:00 UTC)")
    assert "- Neo4j 5.26.30 community (throwaway local server" in text
    assert "; 1-minute load average 9.9 when the run began, 7.5 when it ended" in text
    bare = render_tenants_markdown(_report().model_copy(update={"load_average": None}))
    assert "load average" not in bare
    assert "1,000 tenant namespaces of 1,000 facts, a small namespace of 50 facts" in text
    assert "one pool of 5,000 distinct synthetic facts" in text
    assert "each pool fact is in about 200.0 tenants" in text and "cosine about 0.995" in text
    assert "- pool embedded once: 100,000 texts, 400 texts/s" in text
    assert "1,100,050 facts in 2,200 s, 500 facts/s" in text
    assert (
        "| 5.26.30 | small | 50 | default (hybrid, gated) | 30.0 | 60.0 | 90.0 | 60.0 | 120 "
        "| 92.0% | 96.0% | 7 / 3 | - | 10.0 |"
    ) in text
    assert "| 5.26.30 | large | 100,000 | vector index only, no gate | 8.0 | 16.0 | 24.0 |" in text
    assert "| 97.5% | 98.8% |" in text
    assert (
        "| recall db p95, large namespace among tenants | 100,000 | 20.0 ms | ≤ 25.0 ms |" in text
    )
    rows = [line for line in text.splitlines() if line.startswith("| 5.26.30 |")]
    assert len(rows) == 4 and all(row.count("|") == len(RECALL_HEADER) + 1 for row in rows)


def test_two_runs_rows_stand_in_one_table() -> None:
    # The Neo4j version leads each row, so that a 5.26 run and a 2026.09 run read side by side.
    rows = recall_rows(_report()) + recall_rows(_report(version="2026.09.0"))
    assert [r[0] for r in rows] == ["5.26.30"] * 4 + ["2026.09.0"] * 4
    assert all(len(r) == len(RECALL_HEADER) for r in rows)


def test_the_report_round_trips_through_json() -> None:
    report = _report()
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    assert data["passed"] is True and data["server"]["neo4j_version"] == "5.26.30"
    assert data["namespaces"][1]["recalls"][0]["exact_top_all"] == 0.85
    data.pop("passed")
    for phase in ("pool_embedding", "load"):
        data[phase].pop("per_second")
    assert TenantsReport.model_validate(data) == report


# --- the command line -----------------------------------------------------------------------------
def test_the_command_passes_the_tenant_options(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[TenantsOptions] = []

    def fake(options: TenantsOptions, **kwargs: Any) -> TenantsReport:
        seen.append(options)
        return _report()

    monkeypatch.setattr(tenants, "run_tenants_bench", fake)
    args = ["--tenants", "1kx1k", "--large", "100k", "--small", "40", "--pool", "3000"]
    result = CliRunner().invoke(bench_command, [*args, "--seed", "4", "--batch-size", "500"])
    assert result.exit_code == 0, result.output
    (options,) = seen
    assert (options.namespaces, options.facts, options.large) == (1_000, 1_000, 100_000)
    assert (options.small, options.pool, options.seed, options.batch_size) == (40, 3_000, 4, 500)
    assert options.queries == 100 and options.warmup == 20 and options.server == "scratch"
    assert "| 5.26.30 | large | 100,000 |" in result.stdout
    result = CliRunner().invoke(bench_command, ["--tenants", "5x20", "--queries", "7", "--json"])
    assert result.exit_code == 0 and seen[-1].queries == 7 and seen[-1].large == 100_000
    assert json.loads(result.stdout)["namespaces"][0]["name"] == "small"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tenants", "1000"], "is not NxM"),
        (["--tenants", "0x10"], "is not NxM"),
        (["--tenants", "10x"], "is not NxM"),
        (["--tenants", "axb"], "is not NxM"),
        (["--tenants", "2x3x4"], "is not NxM"),
        (["--tenants", "200kx10"], "namespaces"),
        (["--tenants", "10x10", "--large", "0"], "--large"),
    ],
)
def test_the_command_refuses_a_bad_shape_before_it_runs(
    monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the run started")

    monkeypatch.setattr(tenants, "run_tenants_bench", refuse)
    result = CliRunner().invoke(bench_command, args)
    assert result.exit_code == 2, result.output
    assert re.search(re.escape(message), result.output), result.output
    assert "Traceback" not in result.output


# --- where the time goes, and two servers compared ------------------------------------------
def test_statement_figures_sum_each_statement_within_a_recall() -> None:
    recalls = [
        [
            StatementTime("recall_search_filtered", 10.0, 6.0, 1),
            StatementTime("recall_details", 4.0, 2.0, 1),
            StatementTime("recall_details", 2.0, 1.0, 1),
            StatementTime("transaction:read", 20.0, None, 0),
        ],
        [
            StatementTime("recall_search_filtered", 12.0, 8.0, 1),
            StatementTime("transaction:read", 15.0, None, 0),
        ],
    ]
    figures = {f.name: f for f in statement_figures(recalls)}
    assert list(figures) == ["recall_search_filtered", "recall_details", "transaction:read"]
    assert figures["recall_details"].per_recall == 1.0  # twice in one recall, none in the other
    details = figures["recall_details"]
    assert details.client_ms.p50 == 6.0 and details.server_ms is not None
    assert details.server_ms.max == 3.0
    assert figures["transaction:read"].server_ms is None
    assert figures["recall_search_filtered"].client_ms.mean == 11.0


def test_the_comparison_holds_the_newer_server_to_the_older_and_to_vector_only() -> None:
    old, new = _report("5.26.30", large_db=10.0), _report("2026.09.0", large_db=9.0)
    targets = {t.name: t for t in comparison_targets([new, old])}
    assert targets["large namespace: db p95 on 2026.09.0 / on 5.26.30"].status == "pass"
    assert targets["small namespace: db p95 on 2026.09.0 / on 5.26.30"].status == "pass"
    # default 9 ms p95 against vector-only 8 ms: 1.125x, under 1.3x
    vector_ratio = targets["large namespace on 2026.09.0: db p95 default / vector only"]
    assert vector_ratio.measured == pytest.approx(1.125) and vector_ratio.status == "pass"
    slower = comparison_targets([_report("2026.09.0", large_db=12.0), old])
    assert {t.name: t.status for t in slower}[
        "large namespace: db p95 on 2026.09.0 / on 5.26.30"
    ] == "fail"
    comparison = TenantsComparison(runs=[new, old], targets=comparison_targets([new, old]))
    text = render_comparison_markdown(comparison)
    assert text.startswith("# graphmem bench --tenants on 2 Neo4j versions")
    assert "| 2026.09.0 | large | 100,000 |" in text and "| 5.26.30 | large | 100,000 |" in text
    assert "# The run on Neo4j 5.26.30" in text and "## Where the time goes" in text


def test_versions_run_on_throwaway_servers_only() -> None:
    with pytest.raises(ValidationError, match="--server configured"):
        TenantsOptions(versions=("2026.09.0",), server="configured")
    with pytest.raises(ValidationError, match="twice"):
        TenantsOptions(versions=("5.26.30", "5.26.30"))


def test_recall_is_read_as_a_ratio_to_the_bare_read_beside_it() -> None:
    report = _report()
    large = report.namespaces[1]
    report.namespaces[1] = large.model_copy(
        update={"bare": BareRead(statement="bench_bare_vector", k=60, db_ms=_p(4.0))}
    )
    (row,) = bare_rows(report)  # the small namespace has no bare read here
    # vector-only p95 16 ms and default p95 20 ms against the bare read's 8 ms
    assert row == ["5.26.30", "large", "`bench_bare_vector` (k=60)", "4.0", "8.0", "2.00", "2.50"]
    assert "## Beside a bare vector read (ms)" in render_tenants_markdown(report)
