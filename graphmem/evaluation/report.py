"""The evaluation report as Markdown tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from graphmem.evaluation.results import ConfigurationResult, EvalReport, Metrics

#: The default configuration should reach at least this share of knowledge updates with the
#: updated message above the original.
UPDATE_TARGET = 0.9


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


_METRIC_HEADER = [
    "scored",
    "any@1",
    "any@5",
    "any@10",
    "all@1",
    "all@5",
    "all@10",
    "NDCG@10",
    "no gold: empty",
    "p50 ms",
    "p95 ms",
    "db p50 ms",
    "db p95 ms",
]


def _metric_cells(m: Metrics) -> list[str]:
    return [
        str(m.scored),
        *(_f(m.recall_any[k]) for k in (1, 5, 10)),
        *(_f(m.recall_all[k]) for k in (1, 5, 10)),
        _f(m.ndcg_at_10),
        f"{m.no_gold_empty}/{m.no_gold}",
        _ms(m.latency_ms_p50),
        _ms(m.latency_ms_p95),
        _ms(m.db_ms_p50),
        _ms(m.db_ms_p95),
    ]


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "-"


def _by_name(report: EvalReport) -> dict[str, ConfigurationResult]:
    return {c.name: c for c in report.configurations}


def render_markdown(report: EvalReport) -> str:
    lines = [
        "# graphmem retrieval evaluation",
        "",
        f"graphmem {report.graphmem_version}, {report.started_at:%Y-%m-%d %H:%M} UTC, "
        f"{report.wall_seconds:.0f} s wall time; Neo4j {report.server}; embedder "
        f"{report.embedder}; namespaces `{report.namespace_prefix}-*`.",
        f"{report.conversations} conversations, {report.messages} messages "
        f"({report.user_messages} from the user, {report.merged_messages} merged as repeats), "
        f"{report.questions} questions, k = {report.k}.",
        "",
        "any@k: at least one gold message among the top k; all@k: every gold message among "
        "the top k; message granularity (each message once, at its first rank). Questions "
        "without gold messages are not scored; `no gold: empty` counts those for which "
        "nothing was returned. Latency: the client's total per recall (baselines: ranking "
        "time in Python); db: the read transaction.",
        "",
        "## Configurations",
        "",
    ]
    lines += _table(
        ["configuration", *_METRIC_HEADER],
        [[c.name, *_metric_cells(c.overall)] for c in report.configurations],
    )
    default = report.configurations[0]
    lines += ["", f"## Per category ({default.name})", ""]
    lines += _table(
        ["category", "questions", *_METRIC_HEADER],
        [
            [cat, str(m.questions), *_metric_cells(m)]
            for cat, m in sorted(default.by_category.items())
        ],
    )
    categories = sorted({cat for c in report.configurations for cat in c.by_category})
    cells: tuple[tuple[str, Callable[[Metrics], str]], ...] = (
        ("recall_any@10", lambda m: _f(m.recall_any[10])),
        ("NDCG@10", lambda m: _f(m.ndcg_at_10)),
    )
    for title, cell in cells:
        lines += ["", f"## {title} by category and configuration", ""]
        lines += _table(
            ["category", *(c.name for c in report.configurations)],
            [
                [
                    cat,
                    *(
                        cell(c.by_category[cat]) if cat in c.by_category else "-"
                        for c in report.configurations
                    ),
                ]
                for cat in categories
            ],
        )
    lines += ["", "## Knowledge updates and contradictions", ""]
    lines += [
        "Updated above original: the best-ranked updated message ranks above the best-ranked "
        "original one (an unlisted message ranks below every listed one). Contradictions: at "
        "least one message of each statement among the top 10.",
        "",
    ]
    rows = []
    for c in report.configurations:
        u, x = c.overall.updates, c.overall.contradictions
        rows.append(
            [
                c.name,
                _share(u.updated_above, u.questions),
                str(u.original_above),
                str(u.tie),
                str(u.both_missing),
                _share(x.both_in_top10, x.questions),
            ]
        )
    lines += _table(
        [
            "configuration",
            "updated above original",
            "original above",
            "tie",
            "both missing",
            "contradiction: both in top 10",
        ],
        rows,
    )
    lines += ["", "## Checks", ""]
    lines += [f"- {line}" for line in checks(report)]
    return "\n".join(lines) + "\n"


def checks(report: EvalReport) -> list[str]:
    """The default configuration against the single retrievers, exact cosine, and the
    knowledge-update target."""
    named = _by_name(report)
    default = report.configurations[0]
    mine = default.overall.recall_any[10]
    out = []
    for other in ("vector-only", "fulltext-only", "cosine-exact"):
        theirs = named[other].overall.recall_any[10] if other in named else None
        if mine is not None and theirs is not None:  # None: no question was scored
            verdict = "pass" if mine >= theirs else "fail"
            out.append(
                f"{verdict}: {default.name} recall_any@10 {mine:.3f} >= {other} {theirs:.3f} "
                f"(difference {mine - theirs:+.3f})"
            )
    share = default.overall.updates.share
    if share is not None:
        verdict = "pass" if share >= UPDATE_TARGET else "fail"
        out.append(
            f"{verdict}: {default.name} updated message above the original in {share:.1%} of "
            f"knowledge updates (target {UPDATE_TARGET:.0%})"
        )
    return out
