"""The context evaluation's report: its figures per set and arm, and their Markdown tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from graphmem_bench.markdown import markdown_table


class ArmFigures(BaseModel):
    """One arm on one set: the shares of measured questions whose gold the block holds, and
    what the arm's consolidation left (tiers of the believed facts, summaries written)."""

    name: str
    label: str
    questions: int
    #: Questions whose every gold message is in the block (a summary standing for its members).
    all_gold: int
    #: Questions with at least one gold message in the block (likewise).
    any_gold: int
    #: Questions with at least one gold message in a line of its own (no summary counted).
    any_own_line: int
    hot: int = 0
    cold: int = 0
    summaries: int = 0
    #: Mean lines of the block that are hot facts, and mean tokens of the block.
    hot_lines: float = 0.0
    tokens: float = 0.0

    @property
    def all_share(self) -> float | None:
        return self.all_gold / self.questions if self.questions else None

    @property
    def any_share(self) -> float | None:
        return self.any_gold / self.questions if self.questions else None


class ContextRecord(BaseModel):
    """One measured question: its gold, and per arm the message ids the block held."""

    conversation_id: str
    question: str
    gold: tuple[str, ...]
    shown: dict[str, list[str]] = Field(default_factory=dict)


class ContextSetReport(BaseModel):
    name: str
    conversations: int
    facts: int
    #: Facts merged into another by the shared consolidation (near-exact duplicates).
    merged: int
    history_questions: int
    measured_questions: int
    arms: list[ArmFigures]
    details: list[ContextRecord]
    wall_seconds: float


class ContextReport(BaseModel):
    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    wall_seconds: float
    server: str
    embedder: str
    summariser: str
    #: The run's namespaces are ``<namespace_prefix>-s<set>-c<conversation>``.
    namespace_prefix: str
    budget_tokens: int
    k: int
    max_questions: int | None
    max_conversations: int | None
    sets: list[ContextSetReport]


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def render_context(report: ContextReport) -> str:
    """The report as Markdown: all-gold and any-gold side by side, then each set's arms."""
    names = [s.name for s in report.sets]
    arms = [(a.name, a.label) for a in report.sets[0].arms] if report.sets else []
    lines = [
        "# graphmem context evaluation",
        "",
        f"graphmem {report.graphmem_version}, {report.embedder}, {report.server}; "
        f"context budget {report.budget_tokens} tokens, k = {report.k}; summaries by "
        f"{report.summariser}; {report.wall_seconds:.0f} s.",
        "",
        "Share of the measured questions whose gold messages are in the block (a summary "
        "standing for its members counts for them):",
    ]
    for title, attr in (("all gold in the block", "all_share"), ("any gold", "any_share")):
        rows = []
        for arm, label in arms:
            values = [getattr(_arm(s, arm), attr) for s in report.sets]
            rows.append([label, *(_f(v) for v in values), _f(_mean(values))])
        lines += ["", f"## {title}", ""]
        lines += markdown_table(["arm", *names, "mean"], None, rows)
    for one in report.sets:
        lines += [
            "",
            f"## {one.name}",
            "",
            f"{one.conversations} conversations, {one.facts} facts ({one.merged} merged by the "
            f"shared consolidation); {one.history_questions} questions replayed as history, "
            f"{one.measured_questions} measured; {one.wall_seconds:.0f} s.",
            "",
        ]
        header = [
            "arm",
            "all gold",
            "any gold",
            "any, own line",
            "hot",
            "cold",
            "summaries",
            "hot lines",
            "tokens",
        ]
        rows = [
            [
                a.label,
                _f(a.all_share),
                _f(a.any_share),
                _f(a.any_own_line / a.questions if a.questions else None),
                str(a.hot),
                str(a.cold),
                str(a.summaries),
                f"{a.hot_lines:.1f}",
                f"{a.tokens:.0f}",
            ]
            for a in one.arms
        ]
        lines += markdown_table(header, None, rows)
    return "\n".join(lines) + "\n"


def _arm(report: ContextSetReport, name: str) -> ArmFigures:
    return next(a for a in report.arms if a.name == name)
