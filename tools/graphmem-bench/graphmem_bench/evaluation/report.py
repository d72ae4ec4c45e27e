"""The evaluation report as Markdown tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from graphmem_bench.evaluation.results import ConfigurationResult, EvalReport, Metrics, SuiteReport
from graphmem_bench.evaluation.tables import (
    CALIBRATION_NOTE,
    calibration_table,
    category_table,
    db_time_rows,
    empty_on_no_gold,
    set_table,
)
from graphmem_bench.evaluation.tables import fmt as _f
from graphmem_bench.evaluation.tables import ms as _ms
from graphmem_bench.evaluation.tables import share as _share
from graphmem_bench.markdown import markdown_table

#: The default configuration should reach at least this share of knowledge updates with the
#: updated message above the original.
UPDATE_TARGET = 0.9
#: The default's p95 database time should be at most this many times vector-only's.
DB_RATIO_TARGET = 1.5


_METRIC_HEADER = [
    "scored",
    "any@1",
    "any@5",
    "any@10",
    "all@1",
    "all@5",
    "all@10",
    "NDCG@10",
    "precision@10",
    "empty on no gold",
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
        _f(m.precision_at_10),
        empty_on_no_gold(m),
        _ms(m.latency_ms_p50),
        _ms(m.latency_ms_p95),
        _ms(m.db_ms_p50),
        _ms(m.db_ms_p95),
    ]


def _by_name(report: EvalReport) -> dict[str, ConfigurationResult]:
    return {c.name: c for c in report.configurations}


def _updates_section(report: EvalReport) -> list[str]:
    """Knowledge updates and contradictions, per configuration."""
    lines = ["", "## Knowledge updates and contradictions", ""]
    lines += [
        "Updated above original: the best-ranked updated message ranks above the best-ranked "
        "original one (an unlisted message ranks below every listed one), over the questions "
        "whose updated and original messages differ. Contradictions: at "
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
    lines += markdown_table(
        [
            "configuration",
            "updated above original",
            "original above",
            "tie",
            "both missing",
            "contradiction: both in top 10",
        ],
        None,
        rows,
    )
    return lines


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
        "the top k; precision@10: the share of the returned messages (at most 10) that are "
        "gold, a question with nothing returned counting 0; message granularity (each "
        "message once, at its first rank). Questions without gold messages are not scored; "
        "`empty on no gold` is the share of them for which nothing was returned. Latency: "
        "the client's total per recall, the question already embedded (baselines: ranking "
        "time in Python); db: the read transaction. Recall's configurations ran interleaved, "
        "each question through all of them in a rotating order, after an untimed warm-up.",
        "",
        "## Configurations",
        "",
    ]
    lines += markdown_table(
        ["configuration", *_METRIC_HEADER],
        None,
        [[c.name, *_metric_cells(c.overall)] for c in report.configurations],
    )
    default = report.configurations[0]
    lines += ["", f"## Per category ({default.name})", ""]
    lines += markdown_table(
        ["category", "questions", *_METRIC_HEADER],
        None,
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
        lines += markdown_table(
            ["category", *(c.name for c in report.configurations)],
            None,
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
    lines += _updates_section(report)
    lines += ["", "## Database time: the default against vector-only", ""]
    lines += db_time_rows([("data", report)])
    lines += ["", f"## Calibration of hit.score ({default.name})", "", CALIBRATION_NOTE, ""]
    lines += calibration_table(report.calibration)
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
    out += _db_check(report)
    return out


def _db_check(report: EvalReport, label: str = "") -> list[str]:
    """The default's p95 database time against vector-only's (none without both)."""
    ratio = report.db_p95_ratio
    if ratio is None:
        return []
    verdict = "pass" if ratio <= DB_RATIO_TARGET else "fail"
    return [
        f"{verdict}: {label}{report.configurations[0].name} p95 database time {ratio:.2f}x "
        f"vector-only's, measured interleaved (target at most {DB_RATIO_TARGET}x)"
    ]


# --- several data sets side by side -------------------------------------------------------------
#: The configurations computed outside Neo4j, which the default is measured against.
BASELINE_NAMES = ("cosine-exact", "bm25", "rrf-plain")
#: The default over another corpus (not a ranking the default could have chosen instead):
#: reported, not checked against.
CORPUS_VARIANTS = ("user-only",)


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def render_suite(suite: SuiteReport) -> str:
    """Every data set side by side: each metric per set with its means (development sets and
    held-out sets apart), the knowledge updates, the default's database time against
    vector-only's, then each set's own tables (every configuration; the default per
    category), the calibration of the default's scores, and the checks."""
    first = suite.sets[0].report
    lines = [
        "# graphmem retrieval evaluation, several data sets",
        "",
        f"graphmem {suite.graphmem_version}, {suite.started_at:%Y-%m-%d %H:%M} UTC, "
        f"{suite.wall_seconds:.0f} s wall time; embedder {first.embedder}; "
        f"k = {first.k}. Each set ran on its own Neo4j"
        + (" (a scratch server each)." if "scratch" in first.server else ".")
        + " Recall's configurations ran interleaved (each question through all of them, in "
        "an order rotating from question to question) after an untimed warm-up.",
        "",
        "| data set | role | conversations | messages | questions (scored) |",
        "|---|---|---|---|---|",
    ]
    for s in suite.sets:
        r = s.report
        scored = r.configurations[0].overall.scored
        skipped = f", {r.skipped_messages} empty left out" if r.skipped_messages else ""
        lines.append(
            f"| {s.name} | {'held out' if s.held_out else 'development'} | {r.conversations} | "
            f"{r.messages}{skipped} | {r.questions} ({scored}) |"
        )
    lines += _side_by_side(suite)
    lines += ["", "## Database time: the default against vector-only", ""]
    lines += db_time_rows([(s.name, s.report) for s in suite.sets])
    for s in suite.sets:
        role = "held out" if s.held_out else "development"
        lines += ["", f"## {s.name} ({role})", ""]
        lines += set_table(s.report)
        lines += ["", f"Per category ({s.report.configurations[0].name}):", ""]
        lines += category_table(s.report)
    lines += _calibration_section(suite)
    lines += ["", "## Checks", ""]
    lines += [f"- {line}" for line in suite_checks(suite)]
    return "\n".join(lines) + "\n"


def _side_by_side(suite: SuiteReport) -> list[str]:
    """Per metric, every configuration against every set with the means; then the knowledge
    updates per set."""
    names = [c.name for c in suite.sets[0].report.configurations]
    dev = [s for s in suite.sets if not s.held_out]
    held = [s for s in suite.sets if s.held_out]
    lines = []
    for title, cell in _SUITE_METRICS:
        header = ["configuration", *(s.name for s in suite.sets), "mean (development)"]
        if held:
            header.append("mean (held out)")
        rows = []
        for name in names:
            values = {s.name: cell(_by_name(s.report)[name].overall) for s in suite.sets}
            row = [name, *(_f(values[s.name]) for s in suite.sets)]
            row.append(_f(_mean([values[s.name] for s in dev])))
            if held:
                row.append(_f(_mean([values[s.name] for s in held])))
            rows.append(row)
        lines += ["", f"## {title}", ""]
        lines += markdown_table(header, None, rows)
    lines += ["", "## Knowledge updates: updated message above the original", ""]
    lines += [
        "Over the questions whose updated and original messages differ (a question naming one "
        "message as both cannot be ordered).",
        "",
    ]
    lines += markdown_table(
        ["configuration", *(s.name for s in suite.sets)],
        None,
        [
            [
                name,
                *(
                    _share(u.updated_above, u.questions)
                    for u in (_by_name(s.report)[name].overall.updates for s in suite.sets)
                ),
            ]
            for name in names
        ],
    )
    return lines


def _calibration_section(suite: SuiteReport) -> list[str]:
    """The default's hits by score band: pooled over the development sets and over the
    held-out ones, then per set."""
    default = suite.sets[0].report.configurations[0].name
    lines = ["", f"## Calibration of hit.score ({default})", "", CALIBRATION_NOTE]
    tables = [(f"{role} sets, pooled", bands) for role, bands in suite.calibration.items()]
    tables += [(s.name, s.report.calibration) for s in suite.sets]
    for title, bands in tables:
        lines += ["", f"**{title}**", ""]
        lines += calibration_table(bands)
    return lines


_SUITE_METRICS: tuple[tuple[str, Callable[[Metrics], float | None]], ...] = (
    ("recall_any@10", lambda m: m.recall_any[10]),
    ("recall_any@1", lambda m: m.recall_any[1]),
    ("recall_any@5", lambda m: m.recall_any[5]),
    ("recall_all@10", lambda m: m.recall_all[10]),
    ("NDCG@10", lambda m: m.ndcg_at_10),
    ("precision@10", lambda m: m.precision_at_10),
    ("empty on no gold", lambda m: m.empty_on_no_gold),
)


def suite_checks(suite: SuiteReport) -> list[str]:
    """The default against every other configuration on every set (recall_any@10; the corpus
    variants apart), and its mean over the development sets against the best baseline's."""
    out = []
    for s in suite.sets:
        default = s.report.configurations[0]
        mine = default.overall.recall_any[10]
        if mine is None:
            continue
        beaten_by = [
            f"{c.name} {c.overall.recall_any[10]:.3f}"
            for c in s.report.configurations[1:]
            if c.name not in CORPUS_VARIANTS and (c.overall.recall_any[10] or 0.0) > mine
        ]
        verdict = "fail" if beaten_by else "pass"
        against = ", ".join(beaten_by) if beaten_by else "no configuration is above it"
        out.append(f"{verdict}: {s.name}: {default.name} recall_any@10 {mine:.3f}; {against}")
    dev = [s for s in suite.sets if not s.held_out]
    for group, sets in (("development", dev), ("held-out", [s for s in suite.sets if s.held_out])):
        if not sets:
            continue
        mine_mean = _mean([s.report.configurations[0].overall.recall_any[10] for s in sets])
        named = [_by_name(s.report) for s in sets]
        best, best_mean = None, None
        for name in BASELINE_NAMES:
            value = _mean([n[name].overall.recall_any[10] for n in named if name in n])
            if value is not None and (best_mean is None or value > best_mean):
                best, best_mean = name, value
        if mine_mean is not None and best_mean is not None:
            gap = mine_mean - best_mean
            verdict = "pass" if gap >= 0.05 else "fail"
            out.append(
                f"{verdict}: {group} mean recall_any@10 {mine_mean:.3f} against the best "
                f"baseline ({best}) {best_mean:.3f}: {gap:+.3f} (target +0.050)"
            )
    for s in suite.sets:
        out += _db_check(s.report, f"{s.name}: ")
    return out
