"""The evaluation report: per configuration, overall and per category."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class UpdateFigures(BaseModel):
    """Knowledge updates: where the best-ranked updated message stands against the original,
    over the questions whose updated and original messages differ (``same_message`` counts
    those that name one message as both, which no ranking can order)."""

    questions: int = 0
    same_message: int = 0
    updated_above: int = 0
    original_above: int = 0
    tie: int = 0
    both_missing: int = 0

    @property
    def share(self) -> float | None:
        return self.updated_above / self.questions if self.questions else None


class ContradictionFigures(BaseModel):
    """Contradictions: both statements (one message of each) among the top 10."""

    questions: int = 0
    both_in_top10: int = 0


class Metrics(BaseModel):
    """Averages over the scored questions of one configuration (and one category); None
    when no question was scored (an average over no questions is undefined)."""

    questions: int
    scored: int
    recall_any: dict[int, float | None]
    recall_all: dict[int, float | None]
    ndcg_at_10: float | None
    #: Questions without gold ids, and how many of them got no hit at all.
    no_gold: int
    no_gold_empty: int
    latency_ms_p50: float
    latency_ms_p95: float
    db_ms_p50: float | None = None
    db_ms_p95: float | None = None
    updates: UpdateFigures
    contradictions: ContradictionFigures


class QuestionRecord(BaseModel):
    conversation_id: str
    question: str
    category: str
    gold: tuple[str, ...]
    #: Per configuration: the distinct message ids returned, best first.
    ranked: dict[str, list[str]] = Field(default_factory=dict)


class ConfigurationResult(BaseModel):
    name: str
    description: str
    overall: Metrics
    by_category: dict[str, Metrics]


class EvalReport(BaseModel):
    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    wall_seconds: float
    server: str
    embedder: str
    namespace_prefix: str
    k: int
    conversations: int
    messages: int
    #: Messages of the data left out because their text was empty.
    skipped_messages: int = 0
    user_messages: int
    merged_messages: int
    questions: int
    configurations: list[ConfigurationResult]
    details: list[QuestionRecord]


class SetReport(BaseModel):
    """One data set's report within a run over several."""

    name: str
    #: Never used to choose a default (reported apart).
    held_out: bool = False
    report: EvalReport


class SuiteReport(BaseModel):
    """A run over several data sets: one report per set, all on one server and embedder."""

    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    wall_seconds: float
    sets: list[SetReport]
