"""The evaluation report: per configuration, overall and per category."""

from __future__ import annotations

from datetime import datetime
from typing import Any

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
    #: The share of the returned messages (at most 10) that are gold, averaged over the
    #: scored questions (a scored question with nothing returned counts 0).
    precision_at_10: float | None = None
    #: Questions without gold ids, how many of them got no hit at all, and that share (None
    #: when there were none).
    no_gold: int
    no_gold_empty: int
    empty_on_no_gold: float | None = None
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
    #: Per configuration of recall (not the baselines): each hit, best first, as a dict
    #: with ``kind``, ``ids`` (its message ids), ``gold`` (one of them is a gold message),
    #: ``score`` (``hit.score``) and ``scores`` (``hit.scores``, the fields that are set);
    #: :func:`graphmem_bench.evaluation.calibration.hit_rows` flattens them.
    hits: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


class Band(BaseModel):
    """One score band of a calibration table: the hits whose score (clipped to [0, 1]) lies
    in [low, high) (the last band includes 1.0), their mean clipped score (what the score
    predicts) and the share of them that are gold (what was observed)."""

    low: float
    high: float
    hits: int
    mean_score: float | None
    gold_share: float | None


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
    #: The first configuration's (the default's) hits by score band.
    calibration: list[Band] = Field(default_factory=list)
    #: The default's p95 database time over vector-only's (None without both).
    db_p95_ratio: float | None = None


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
    #: The default's hits by score band, pooled over the development sets and over the
    #: held-out ones (each set's own table is in its report).
    calibration: dict[str, list[Band]] = Field(default_factory=dict)
