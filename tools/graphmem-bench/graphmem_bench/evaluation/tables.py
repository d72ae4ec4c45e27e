"""The tables a report shows for each data set: its configurations' main figures, the
default's figures per category, its database time against vector-only's, and the
calibration of its hit scores."""

from __future__ import annotations

from collections.abc import Sequence

from graphmem_bench.evaluation.results import Band, EvalReport, Metrics
from graphmem_bench.markdown import markdown_table


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "-"


def empty_on_no_gold(m: Metrics) -> str:
    """How many of the questions without gold got no hit, of how many, and the share."""
    return share(m.no_gold_empty, m.no_gold)


#: The main figures of one configuration on one set, in the order of :func:`main_cells`.
MAIN_HEADER = [
    "any@1",
    "any@5",
    "any@10",
    "all@10",
    "NDCG@10",
    "precision@10",
    "empty on no gold",
    "updated above original",
    "db p50 / p95 ms",
]


def main_cells(m: Metrics) -> list[str]:
    db = "-" if m.db_ms_p50 is None else f"{m.db_ms_p50:.0f} / {m.db_ms_p95 or 0:.0f}"
    return [
        fmt(m.recall_any[1]),
        fmt(m.recall_any[5]),
        fmt(m.recall_any[10]),
        fmt(m.recall_all[10]),
        fmt(m.ndcg_at_10),
        fmt(m.precision_at_10),
        empty_on_no_gold(m),
        share(m.updates.updated_above, m.updates.questions),
        db,
    ]


def set_table(report: EvalReport) -> list[str]:
    """Every configuration's main figures on one set."""
    return markdown_table(
        ["configuration", *MAIN_HEADER],
        None,
        [[c.name, *main_cells(c.overall)] for c in report.configurations],
    )


def category_table(report: EvalReport) -> list[str]:
    """The first configuration's (the default's) figures per category of one set."""
    default = report.configurations[0]
    return markdown_table(
        [
            "category",
            "questions",
            "scored",
            "any@1",
            "any@10",
            "NDCG@10",
            "precision@10",
            "empty on no gold",
        ],
        None,
        [
            [
                cat,
                str(m.questions),
                str(m.scored),
                fmt(m.recall_any[1]),
                fmt(m.recall_any[10]),
                fmt(m.ndcg_at_10),
                fmt(m.precision_at_10),
                empty_on_no_gold(m),
            ]
            for cat, m in sorted(default.by_category.items())
        ],
    )


def db_time_rows(named: Sequence[tuple[str, EvalReport]]) -> list[str]:
    """The default's database time against vector-only's on each set (same run, the
    configurations interleaved), with the ratio at p95."""
    rows = []
    for name, report in named:
        by_name = {c.name: c.overall for c in report.configurations}
        default, vector = report.configurations[0].overall, by_name.get("vector-only")
        rows.append(
            [
                name,
                f"{ms(default.db_ms_p50)} / {ms(default.db_ms_p95)}",
                "-" if vector is None else f"{ms(vector.db_ms_p50)} / {ms(vector.db_ms_p95)}",
                "-" if report.db_p95_ratio is None else f"{report.db_p95_ratio:.2f}x",
            ]
        )
    return markdown_table(
        ["data set", "default db p50 / p95 ms", "vector-only db p50 / p95 ms", "p95 ratio"],
        None,
        rows,
    )


CALIBRATION_NOTE = (
    "Hits of the default by `hit.score`, clipped to [0, 1] (a score below 0 counts as 0, "
    "above 1 as 1), in bands of 0.1 (the last includes 1.0): how many, their mean clipped "
    "score (what the score predicts) and the share of them that are gold messages of their "
    "question (what was observed; a hit of a question without gold is never gold)."
)


def calibration_table(bands: Sequence[Band]) -> list[str]:
    total = sum(b.hits for b in bands)
    rows = [
        [
            f"{b.low:.1f}-{b.high:.1f}",
            str(b.hits),
            fmt(b.mean_score),
            fmt(b.gold_share),
        ]
        for b in bands
    ]
    gold = sum((b.gold_share or 0.0) * b.hits for b in bands)
    scored = sum((b.mean_score or 0.0) * b.hits for b in bands)
    rows.append(
        [
            "all",
            str(total),
            fmt(scored / total if total else None),
            fmt(gold / total if total else None),
        ]
    )
    return markdown_table(["score band", "hits", "mean score", "share gold"], None, rows)
