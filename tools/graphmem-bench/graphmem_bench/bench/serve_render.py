"""The Markdown report of the service benchmark (``graphmem bench serve``)."""

from __future__ import annotations

from graphmem_bench.bench.render import format_count, format_ms
from graphmem_bench.bench.serve import PathFigures, ServeBenchReport
from graphmem_bench.bench.serve_load import MIX, OPS, RECALL_K
from graphmem_bench.markdown import markdown_table

LATENCY_HEADER = [
    "operation",
    "REST n",
    "REST p50",
    "REST p95",
    "in-process n",
    "in-process p50",
    "in-process p95",
    "p50 REST / in-process",
]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def latency_rows(report: ServeBenchReport) -> list[list[str]]:
    """One row per operation: its count, p50 and p95 through REST and in-process."""
    rows = []
    for op in OPS:
        rest, local = report.rest.op(op), report.in_process.op(op)
        rows.append(
            [
                op,
                format_count(rest.count),
                format_ms(rest.ms.p50),
                format_ms(rest.ms.p95),
                format_count(local.count),
                format_ms(local.ms.p50),
                format_ms(local.ms.p95),
                _ratio(rest.ms.p50, local.ms.p50),
            ]
        )
    return rows


def _rate(figures: PathFigures) -> str:
    per_second = figures.operations / figures.seconds if figures.seconds else 0.0
    load = (
        f", 1-minute load average {figures.load_average[0]:.1f} at its start and "
        f"{figures.load_average[1]:.1f} at its end"
        if figures.load_average
        else ""
    )
    return (
        f"{figures.operations:,} operations in {figures.seconds:.1f} s "
        f"({per_second:,.1f}/s; mean {figures.mean_hits:.1f} hits per recall{load})"
    )


def render_serve_markdown(report: ServeBenchReport) -> str:
    """The report as Markdown: set-up, latency per operation on both paths, the checks."""
    o, machine, embedder = report.options, report.machine, report.embedder
    ready = ", ".join(f"{s.ready_seconds:.1f}" for s in report.servers)
    mix = ", ".join(f"{MIX[op]:.0%} {op}" for op in OPS)
    began = (
        f"; 1-minute load average {report.load_average:.1f} when the run began"
        if report.load_average is not None
        else ""
    )
    lines = [
        f"# graphmem bench --serve ({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"- machine: {machine.cpus} CPUs, {machine.platform}, Python {machine.python}{began}",
        f"- {report.server.describe()}",
        f"- embedder: {embedder.model_id} ({embedder.dimension}-d, "
        f"{embedder.backend or 'own'} on {embedder.device})",
        f"- graphmem {report.graphmem_version}; seed {o.seed}; {o.clients} concurrent clients "
        f"for {o.duration:g} s on each path, each in a namespace of its own; mix {mix} "
        f"(recall k={RECALL_K})",
        f"- REST: {len(report.servers)} `graphmem serve` processes on 127.0.0.1 (ready after "
        f"{ready} s; key cache {o.key_cache:g} s), the clients dealt round-robin over them; "
        f"{_rate(report.rest)}",
        f"- in-process: one `AsyncMemory` in the benchmark's process; {_rate(report.in_process)}",
        "",
        "## Latency (ms; each operation's wall time as its client saw it)",
        "",
    ]
    lines += markdown_table(LATENCY_HEADER, "lrrrrrrr", latency_rows(report))
    lines += cost_lines(report)
    lines += ["", "## Checks", ""]
    lines += markdown_table(
        ["check", "result", "detail"],
        "lll",
        [[c.name, "PASS" if c.passed else "FAIL", c.detail] for c in report.checks],
    )
    lines.append("")
    examples = [
        f"- {label}, {kind}: {message}"
        for label, figures in (("REST", report.rest), ("in-process", report.in_process))
        for kind, message in figures.failure_examples.items()
    ]
    if examples:
        lines += ["One message of each kind of failure:", "", *examples, ""]
    if report.server.kept:
        lines.append(
            f"The benchmark's namespaces stay in the configured Neo4j: "
            f"`{report.namespace_prefix}-*`; its key `{report.key_name}` stays listed, revoked."
        )
    else:
        lines.append("The throwaway Neo4j and its data were deleted after the run.")
    return "\n".join(lines) + "\n"


def cost_lines(report: ServeBenchReport) -> list[str]:
    """With ``--observe-cost``: each operation's REST p50 on the servers with their access log
    and metrics, and on those without."""
    cost = report.observe_cost
    if cost is None:
        return []
    rows = [
        [
            c.op,
            format_count(c.observed_n),
            format_ms(c.observed_p50),
            format_count(c.quiet_n),
            format_ms(c.quiet_p50),
            f"{c.ratio:.3f}x",
        ]
        for c in cost.ops
    ]
    total = [format_ms(cost.observed_p50), "", format_ms(cost.quiet_p50), f"{cost.ratio:.3f}x"]
    rows.append(["all operations", "", *total])
    header = ["operation", "logs+metrics n", "p50", "off n", "p50", "ratio"]
    lines = [
        "",
        "## The access log's and metrics' cost (REST, ms)",
        "",
        "The even servers log every request and keep metrics (the defaults), the odd ones run "
        "with `--log-level off --metrics off`; each client sends its operations in turn to one "
        "of each, under the same mix at the same time.",
        "",
    ]
    return lines + markdown_table(header, "lrrrrr", rows)


__all__ = ["LATENCY_HEADER", "cost_lines", "latency_rows", "render_serve_markdown"]
