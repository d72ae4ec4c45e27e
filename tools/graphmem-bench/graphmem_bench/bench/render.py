"""The Markdown of a ``graphmem bench`` report (:func:`render_markdown`), and the table and
number formats the peer benchmark's report shares."""

from __future__ import annotations

from collections.abc import Sequence

from graphmem_bench.bench.report import BenchReport, SizeResult, TargetResult, per_item_ms
from graphmem_bench.markdown import markdown_table


def format_count(value: float) -> str:
    return f"{value:,.0f}"


def format_ms(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _measured(target: TargetResult) -> str:
    """The measured figure in its unit's usual rounding, with more decimals where that
    rounding would land on the other side of the threshold than the status (0.8496 against
    at least 0.85 shows as 0.8496, not 0.85, beside FAIL)."""
    if target.unit == "ratio":
        decimals, unit = 2, ""
    elif target.unit == "cosine":
        decimals, unit = 4, ""
    elif target.unit == "ms":
        decimals, unit = (1 if target.measured < 100 else 0), " ms"
    else:
        decimals, unit = 0, f" {target.unit}"
    text = f"{target.measured:,.{decimals}f}"
    if target.status != "n/a":
        for more in range(decimals + 1, decimals + 8):
            shown = float(text.replace(",", ""))
            met = (
                shown >= target.threshold
                if target.comparison == ">="
                else shown <= target.threshold
            )
            if met == (target.status == "pass"):
                break
            text = f"{target.measured:,.{more}f}"
    return text + unit


def _threshold(target: TargetResult) -> str:
    sign = "≥" if target.comparison == ">=" else "≤"
    if target.unit in ("ratio", "cosine"):
        return f"{sign} {target.threshold:.2f}"
    if target.unit == "ms":
        return f"{sign} {format_ms(target.threshold)} ms"
    return f"{sign} {format_count(target.threshold)} {target.unit}"


def _split(r: SizeResult) -> str:
    """Where end-to-end time went, per fact, beside the two phases that isolate each part."""
    e2e = r.end_to_end
    rest = max(0.0, e2e.seconds - r.end_to_end_embed_seconds)
    return (
        f"end-to-end {per_item_ms(e2e.seconds, e2e.items)} per fact = "
        f"{per_item_ms(r.end_to_end_embed_seconds, e2e.items)} embedding + "
        f"{per_item_ms(rest, e2e.items)} validation and Neo4j; "
        f"ceiling {per_item_ms(r.embedding_ceiling.seconds, r.embedding_ceiling.items)} "
        f"per text; Neo4j-only {per_item_ms(r.neo4j_only.seconds, r.neo4j_only.items)} per fact"
        + (
            f", bare {per_item_ms(r.bare.seconds, r.bare.items)} per fact"
            if r.bare is not None
            else ""
        )
    )


def _cpu_ms(seconds: float | None, items: int) -> str:
    return f"{1000 * seconds / items:.2f}" if seconds is not None and items else "-"


def _cpu_section(report: BenchReport) -> list[str]:
    """Where the CPU went in each phase, per item: this process (the embedder included where
    the phase embeds) and the server, during the phase and after it (its merges)."""
    rows = []
    for r in report.sizes:
        for label, phase in (
            ("embedding ceiling", r.embedding_ceiling),
            ("end-to-end", r.end_to_end),
            ("Neo4j-only", r.neo4j_only),
            ("bare", r.bare),
        ):
            cpu = phase.cpu if phase is not None else None
            if phase is None or cpu is None:
                continue
            busy = phase.cpus_busy
            rows.append(
                [
                    format_count(r.size),
                    label,
                    _cpu_ms(phase.seconds, phase.items),
                    _cpu_ms(cpu.client_seconds, phase.items),
                    _cpu_ms(cpu.server_seconds, phase.items),
                    _cpu_ms(cpu.server_after_seconds, phase.items),
                    f"{busy:.2f}" if busy is not None else "-",
                ]
            )
    if not rows:
        return []
    cpus = report.machine.cpus
    lines = ["", f"CPU per item (ms) on {cpus} CPUs:", ""]
    lines += markdown_table(
        ["facts", "phase", "wall", "client CPU", "server CPU", "server after", "CPUs busy"],
        "rlrrrrr",
        rows,
    )
    lines += [
        "",
        "Client CPU is this process's (validation, the driver and, where the phase embeds, the "
        "embedder); server CPU is the throwaway Neo4j's during the timed calls, and "
        '"server after" what it went on to use once the phase ended, until it was idle (the '
        "Lucene merges the writes left; the Neo4j-only row's holds the bare writes' merges too, "
        "as their batches alternate). A phase whose CPUs were all busy can only go faster "
        "with less CPU per fact.",
    ]
    return lines


def _backends_section(report: BenchReport) -> list[str]:
    """Each backend's ceiling on the same texts, against torch's speed and vectors."""
    comparison = report.backends
    if comparison is None:
        return []
    torch = comparison.get("torch", "fp32")
    rows = []
    for b in comparison.backends:
        speedup = (
            f"{b.ceiling.per_second / torch.ceiling.per_second:.2f}x"
            if torch is not None and torch.ceiling.per_second > 0
            else "-"
        )
        cosine = (
            f"{b.cosine_mean:.4f} / {b.cosine_min:.4f}"
            if b.cosine_mean is not None and b.cosine_min is not None
            else "-"
        )
        rows.append(
            [
                f"{b.backend} {b.precision}",
                b.model_id,
                format_count(b.ceiling.per_second),
                speedup,
                cosine,
                _cpu_ms(b.ceiling.cpu.client_seconds if b.ceiling.cpu else None, b.ceiling.items),
            ]
        )
    lines = ["", f"## Embedding backends ({format_count(comparison.texts)} texts)", ""]
    lines += markdown_table(
        [
            "backend",
            "model id",
            "texts/s",
            "vs torch",
            "cosine to torch (mean / least)",
            "CPU ms per text",
        ],
        "llrrrr",
        rows,
    )
    if comparison.skipped:
        lines += ["", f"The torch backend was not measured: {comparison.skipped}."]
    return lines


def targets_table(targets: Sequence[TargetResult]) -> list[str]:
    """The Markdown rows of a report's target checks."""
    return markdown_table(
        ["target", "facts", "measured", "target", "result"],
        "lrrrl",
        [
            [
                t.name,
                format_count(t.size),
                _measured(t),
                _threshold(t),
                (t.status.upper() if t.status != "n/a" else "n/a")
                + (f" ({t.note})" if t.note else ""),
            ]
            for t in targets
        ],
    )


def _recall_section(report: BenchReport) -> list[str]:
    """The recall latency table, and each size's hits and graph."""
    lines = ["", f"## Recall latency (ms, k={report.options.k})", ""]
    rows = []
    for r in report.sizes:
        rec = r.recall
        for label, p in (
            ("total", rec.total_ms),
            ("embed", rec.embed_ms),
            ("db", rec.db_ms),
            ("stamp", rec.stamp_ms),
            ("db + stamp", rec.db_stamp_ms),
        ):
            first = label == "total"
            rows.append(
                [
                    format_count(r.size) if first else "",
                    f"{rec.queries} after {rec.warmup} warm-up" if first else "",
                    label,
                    format_ms(p.p50),
                    format_ms(p.p95),
                    format_ms(p.p99),
                    format_ms(p.max),
                ]
            )
    lines += markdown_table(
        ["facts", "queries", "part", "p50", "p95", "p99", "max"], "rrlrrrr", rows
    )
    lines.append("")
    for r in report.sizes:
        rec = r.recall
        lines.append(
            f"- {format_count(r.size)} facts: {rec.mean_hits:.1f} hits per query, answer found in "
            f"{rec.found_share:.0%}, exact fallback in {rec.exact_fallbacks} of {rec.queries}; "
            f"the database held {format_count(r.graph_facts)} facts and "
            f"{format_count(r.graph_episodes)} episodes"
        )
    return lines


def render_markdown(report: BenchReport) -> str:
    """The report as Markdown: set-up, throughput, recall latency, targets."""
    opts, server, embedder, machine = report.options, report.server, report.embedder, report.machine
    threads = f", torch {machine.torch_threads} threads" if machine.torch_threads else ""
    lines = [
        f"# graphmem bench ({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"- machine: {machine.cpus} CPUs{threads}, {machine.platform}, Python {machine.python}",
        f"- {server.describe()}",
        f"- embedder: {embedder.model_id} ({embedder.dimension}-d, "
        f"{embedder.backend or 'own'} on {embedder.device}, batch {embedder.batch_size or '-'})",
        f"- ingest batch {opts.batch_size:,} facts; updates {opts.update_share:.0%}; "
        f"untimed warm-up {opts.warmup_facts:,} facts; seed {opts.seed}; "
        f"graphmem {report.graphmem_version}",
        "",
        "## Ingest throughput",
        "",
    ]
    lines += markdown_table(
        [
            "facts",
            "embedding ceiling (texts/s)",
            "end-to-end (facts/s)",
            "ratio",
            "Neo4j-only (facts/s)",
            "bare (facts/s)",
            "Neo4j-only / bare",
            "episodes (msgs/s)",
            "superseded",
        ],
        "rrrrrrrrr",
        [
            [
                format_count(r.size),
                format_count(r.embedding_ceiling.per_second),
                format_count(r.end_to_end.per_second),
                f"{r.end_to_end_ratio:.2f}",
                format_count(r.neo4j_only.per_second),
                format_count(r.bare.per_second) if r.bare is not None else "-",
                f"{r.bare_ratio:.2f}" if r.bare_ratio is not None else "-",
                f"{format_count(r.episodes.per_second)} ({format_count(r.messages)} msgs)",
                f"{format_count(r.superseded)} of {format_count(r.updates)}",
            ]
            for r in report.sizes
        ],
    )
    lines.append("")
    for r in report.sizes:
        lines.append(f"- {format_count(r.size)} facts: {_split(r)}")
    lines += _cpu_section(report)
    lines += _backends_section(report)
    lines += _recall_section(report)
    lines += ["", "## Targets", ""]
    lines += targets_table(report.targets)
    lines.append("")
    if server.kept:
        lines.append(
            f"The benchmark's namespaces stay in the configured Neo4j: "
            f"`{report.namespace_prefix}-*`."
        )
    else:
        lines.append("The throwaway Neo4j and its data were deleted after the run.")
    return "\n".join(lines) + "\n"
