"""What every ``graphmem bench`` subcommand does once its options are read: run its benchmark
(each kind's runner and Markdown, imported when it runs), print the report, write its files,
and exit 1 on a missed target when asked."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from graphmem.cli.plugins import print_report


def say(line: str) -> None:
    """One line of progress, on stderr."""
    click.echo(f"[bench] {line}", err=True)


def _speed(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.render import render_markdown
    from graphmem_bench.bench.runner import run_bench

    report = run_bench(options, settings=settings, progress=say)
    return report, render_markdown(report)


def _peer(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.peer_graphiti import run_peer_bench
    from graphmem_bench.bench.peer_report import render_peer_markdown

    report = run_peer_bench(options, settings=settings, progress=say)
    return report, render_peer_markdown(report)


def _consolidation(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.consolidation import (
        ConsolidationBenchOptions,
        render_consolidation_markdown,
        run_consolidation_bench,
    )

    size = options.sizes[0]
    run_options = ConsolidationBenchOptions(
        facts=size, new=max(size // 10, 1), **_fields(options, *RUN_FIELDS)
    )
    report = run_consolidation_bench(run_options, settings=settings, progress=say)
    return report, render_consolidation_markdown(report)


def _mcp(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.mcp import McpBenchOptions, render_mcp_markdown, run_mcp_bench

    run_options = McpBenchOptions(
        facts=options.sizes[0],
        queries=options.queries,
        warmup=options.warmup,
        **_fields(options, *RUN_FIELDS),
    )
    report = run_mcp_bench(run_options, settings=settings, progress=say)
    return report, render_mcp_markdown(report)


def _tenants(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.tenants import run_tenants_bench
    from graphmem_bench.bench.tenants_compare import (
        TenantsComparison,
        comparison_targets,
        render_comparison_markdown,
    )
    from graphmem_bench.bench.tenants_report import render_tenants_markdown

    reports = []
    for version in options.versions or (None,):
        on = (
            settings
            if version is None
            else settings.model_copy(update={"local_neo4j_version": version})
        )
        reports.append(run_tenants_bench(options, settings=on, progress=say))
    if len(reports) == 1:
        return reports[0], render_tenants_markdown(reports[0])
    comparison = TenantsComparison(runs=reports, targets=comparison_targets(reports))
    return comparison, render_comparison_markdown(comparison)


def _serve(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.serve import run_serve_bench
    from graphmem_bench.bench.serve_render import render_serve_markdown

    report = run_serve_bench(options, settings=settings, progress=say)
    return report, render_serve_markdown(report)


def _startup(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.startup import (
        StartupOptions,
        render_startup_markdown,
        run_startup_bench,
    )

    run_options = StartupOptions(runs=runs, **_fields(options, "server", "heap", "pagecache"))
    report = run_startup_bench(run_options, settings=settings, progress=say)
    return report, render_startup_markdown(report)


#: What the consolidation, MCP and tenants benchmarks take from the common options as they are.
RUN_FIELDS = ("seed", "batch_size", "server", "heap", "pagecache")
#: Each benchmark: its options from the command's, its report and Markdown.
KINDS: dict[str, Callable[[Any, int, Any], tuple[Any, str]]] = {
    "speed": _speed,
    "peer": _peer,
    "consolidation": _consolidation,
    "mcp": _mcp,
    "startup": _startup,
    "tenants": _tenants,
    "serve": _serve,
}


def _fields(options: Any, *names: str) -> dict[str, Any]:
    return {name: getattr(options, name) for name in names}


def measure(
    kind: str,
    options: Any,
    *,
    runs: int = 3,
    out: Path | None,
    as_json: bool,
    fail_on_miss: bool,
    stem: str | None = None,
) -> None:
    """Run the benchmark ``kind`` with ``options`` (see :data:`KINDS`) on the settings'
    machine, and print and write its report as :func:`emit` does."""
    from graphmem import load_settings

    if options.server == "configured":
        kept = "peer-* namespaces and group_ids" if kind == "peer" else "bench-* namespaces"
        click.echo(
            f"graphmem bench: writing into the configured Neo4j; the {kept} stay there afterwards",
            err=True,
        )
    report, markdown = KINDS[kind](options, runs, load_settings())
    prefix = stem or {"speed": "bench"}.get(kind, kind)
    emit(
        report, markdown, f"{prefix}-{report.started_at:%Y%m%dT%H%M%SZ}", out, as_json, fail_on_miss
    )


def emit(
    report: Any, markdown: str, stem: str, out: Path | None, as_json: bool, fail_on_miss: bool
) -> None:
    """Print the report, write its files, and exit 1 on a missed target if asked."""
    data = report.model_dump(mode="json")
    print_report(data, markdown, as_json=as_json, out=out, stem=stem, say=say)
    if fail_on_miss and not report.passed:
        checks = getattr(report, "checks", None)
        if checks:
            failed = ", ".join(check.name for check in checks if not check.passed)
            click.echo(f"Error: checks failed: {failed}", err=True)
            sys.exit(1)
        targets = getattr(report, "targets", None)
        missed = (
            ", ".join(
                t.name + (f" at {t.size:,} facts" if t.size else "")
                for t in targets
                if t.status == "fail"
            )
            if targets
            else f"the {stem.split('-')[0]} target"
        )
        click.echo(f"Error: targets missed: {missed}", err=True)
        sys.exit(1)


__all__ = ["KINDS", "RUN_FIELDS", "emit", "measure", "say"]
