"""``graphmem bench``'s subcommands, and the older flag form that selects them: both reach the
same benchmark with the same options."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from graphmem_bench.cli import benchmark
from graphmem_bench.cli.benchmark import bench as bench_command

#: Each benchmark: its older flags, and the subcommand form that means the same.
PAIRS = [
    (["--sizes", "2k", "--queries", "5", "--backend-texts", "0"],
     ["speed", "--sizes", "2k", "--queries", "5", "--backend-texts", "0"]),
    ([], ["speed"]),
    (["--peer", "graphiti", "--sizes", "10k,20k", "--warmup-facts", "0"],
     ["peer", "graphiti", "--sizes", "10k,20k", "--warmup-facts", "0"]),
    (["--consolidation", "--sizes", "3000,9000", "--seed", "3"],
     ["consolidation", "--facts", "3000", "--seed", "3"]),
    (["--mcp", "--sizes", "500", "--queries", "7", "--warmup", "2"],
     ["mcp", "--facts", "500", "--queries", "7", "--warmup", "2"]),
    (["--startup", "--runs", "2", "--server", "configured"],
     ["startup", "--runs", "2", "--server", "configured"]),
    (["--tenants", "5x20", "--large", "200", "--small", "10", "--batch-size", "50"],
     ["tenants", "5x20", "--large", "200", "--small", "10", "--batch-size", "50"]),
    (["--serve", "--clients", "4", "--duration", "3", "--servers", "1", "--heap", "1g"],
     ["serve", "--clients", "4", "--duration", "3", "--servers", "1", "--heap", "1g"]),
]  # fmt: skip


def _measured(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> dict[str, Any]:
    """What ``graphmem bench ARGS`` hands to the run: the benchmark, its options (as data),
    and how the report is printed."""
    seen: list[dict[str, Any]] = []

    def measure(kind: str, options: Any, **how: Any) -> None:
        seen.append({"kind": kind, "options": options.model_dump(), **how})

    monkeypatch.setattr(benchmark, "measure", measure)
    result = CliRunner().invoke(bench_command, [*args, "--json"] if args else ["--json"])
    assert result.exit_code == 0, result.output
    (call,) = seen
    return call


@pytest.mark.parametrize(("older", "subcommand"), PAIRS)
def test_the_older_flags_and_the_subcommand_run_the_same_benchmark(
    monkeypatch: pytest.MonkeyPatch, older: list[str], subcommand: list[str]
) -> None:
    before = _measured(monkeypatch, older)
    after = _measured(monkeypatch, subcommand)
    assert before == after
    assert before["kind"] == subcommand[0] and before["as_json"] is True


def test_the_older_form_keeps_its_defaults() -> None:
    # --queries: 200 recall queries by default, 100 per namespace and mode with --tenants.
    from graphmem_bench.bench.report import BenchOptions
    from graphmem_bench.bench.tenants_report import TenantsOptions

    assert BenchOptions().queries == 200 and TenantsOptions().queries == 100


def test_options_before_a_subcommand_and_two_benchmarks_are_refused() -> None:
    result = CliRunner().invoke(bench_command, ["--sizes", "2k", "speed"])
    assert result.exit_code == 2 and "after the subcommand" in result.output
    result = CliRunner().invoke(bench_command, ["--startup", "--serve"])
    assert result.exit_code == 2 and "different benchmarks" in result.output
    result = CliRunner().invoke(bench_command, ["tenants", "5x0"])
    assert result.exit_code == 2 and "is not NxM" in result.output


def test_the_help_names_every_subcommand_and_the_older_form() -> None:
    text = CliRunner().invoke(bench_command, ["--help"]).output
    for name in ("speed", "peer", "consolidation", "mcp", "startup", "tenants", "serve"):
        assert f"  {name} " in text, name
    assert "older form" in text and "--tenants NxM" in text
    assert "--sizes" not in text.split("Options:", 1)[1]  # the older flags stay out of the list
