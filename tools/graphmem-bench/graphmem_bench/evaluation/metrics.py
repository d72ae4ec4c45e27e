"""Retrieval metrics at message granularity.

A retrieval result is a ranked list of message ids, best first. A message reached twice (for
instance through its episode and through a fact derived from it) counts once, at its first
rank: :func:`distinct` makes the list. For a question with gold messages ``G`` (a set) and the
first ``k`` entries ``R_k`` of the list:

* ``recall_any@k`` is 1 when at least one gold message is in ``R_k`` (any-hit), else 0;
* ``recall_all@k`` is 1 when every gold message is in ``R_k`` (all-evidence), else 0 (so it is
  0 whenever ``|G| > k``);
* ``ndcg@10`` uses binary relevance: ``DCG = sum(1 / log2(i + 1))`` over the ranks ``i <= 10``
  holding a gold message, divided by the ideal ``sum(1 / log2(i + 1))`` for ``i = 1 ..
  min(|G|, 10)``;
* ``precision@10`` is the share of the returned messages that are gold: ``|R_10 ∩ G| /
  |R_10|``, where ``R_10`` holds at most 10 messages; a question with gold messages for which
  nothing was returned scores 0 (it had an answer and got none).

A question without gold messages cannot be scored: it is left out of these averages and
counted apart, with the share of such questions for which nothing was returned
(``empty on no gold``: the right answer to a question nothing in the conversation answers).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from graphmem_bench.evaluation.format import CONTRADICTION_KEYS, UPDATE_KEYS, EvalQuestion
from graphmem_bench.evaluation.results import ContradictionFigures, Metrics, UpdateFigures

KS = (1, 5, 10)
NDCG_K = 10

UpdateOutcome = Literal["updated_above", "original_above", "tie", "both_missing"]


def distinct(ids: Iterable[str]) -> list[str]:
    """The ids in order, each at its first position only."""
    return list(dict.fromkeys(ids))


def recall_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall needs at least one gold id")
    return 1.0 if wanted & set(distinct(ranked)[:k]) else 0.0


def recall_all(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall needs at least one gold id")
    return 1.0 if wanted <= set(distinct(ranked)[:k]) else 0.0


def ndcg(ranked: Sequence[str], gold: Iterable[str], k: int = NDCG_K) -> float:
    wanted = set(gold)
    if not wanted:
        raise ValueError("NDCG needs at least one gold id")
    dcg = sum(
        1.0 / math.log2(rank + 1)
        for rank, item in enumerate(distinct(ranked)[:k], start=1)
        if item in wanted
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def precision(ranked: Sequence[str], gold: Iterable[str], k: int = NDCG_K) -> float:
    """The share of the first ``k`` distinct returned ids that are gold; 0.0 when nothing was
    returned."""
    wanted = set(gold)
    if not wanted:
        raise ValueError("precision needs at least one gold id")
    top = distinct(ranked)[:k]
    return sum(item in wanted for item in top) / len(top) if top else 0.0


def share(part: int, whole: int) -> float | None:
    """``part / whole``; None (not 0) when ``whole`` is 0."""
    return part / whole if whole else None


def best_rank(ranked: Sequence[str], ids: Iterable[str]) -> int | None:
    """The 1-based rank of the first of ``ids`` in the list, or None when none is there."""
    wanted = set(ids)
    for rank, item in enumerate(distinct(ranked), start=1):
        if item in wanted:
            return rank
    return None


def update_outcome(
    ranked: Sequence[str], original: Iterable[str], updated: Iterable[str]
) -> UpdateOutcome:
    """Whether the best-ranked updated message ranks above the best-ranked original one.

    A message not in the list ranks below every listed one; equal best ranks (an id in both
    lists) are a tie; neither listed is ``both_missing``.
    """
    old, new = best_rank(ranked, original), best_rank(ranked, updated)
    if old is None and new is None:
        return "both_missing"
    if old == new:
        return "tie"
    if old is None:
        return "updated_above"
    if new is None:
        return "original_above"
    return "updated_above" if new < old else "original_above"


def both_present(
    ranked: Sequence[str], first: Iterable[str], second: Iterable[str], k: int = NDCG_K
) -> bool:
    """At least one message of each statement among the first ``k``."""
    top = set(distinct(ranked)[:k])
    return bool(top & set(first)) and bool(top & set(second))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class QuestionScore:
    """One question's figures for one configuration."""

    recall_any: dict[int, float]
    recall_all: dict[int, float]
    ndcg: float
    precision: float


def score_question(ranked: Sequence[str], gold: Sequence[str]) -> QuestionScore | None:
    """All metrics of one question, or None when it has no gold ids."""
    if not gold:
        return None
    return QuestionScore(
        recall_any={k: recall_any(ranked, gold, k) for k in KS},
        recall_all={k: recall_all(ranked, gold, k) for k in KS},
        ndcg=ndcg(ranked, gold, NDCG_K),
        precision=precision(ranked, gold, NDCG_K),
    )


@dataclass
class Answer:
    """One configuration's answer to one question: ranked message ids, its latency, and
    (recall's configurations) each hit's score, breakdown and whether it is gold (see
    :mod:`graphmem_bench.evaluation.calibration`)."""

    ranked: list[str]
    total_ms: float
    db_ms: float | None
    hits: list[dict[str, Any]] | None = None


def summarize(
    questions: Sequence[EvalQuestion], answers: Sequence[Answer], has_db: bool
) -> Metrics:
    """The averages and counts of one configuration over ``questions``."""
    scores = []
    no_gold = no_gold_empty = 0
    updates = UpdateFigures()
    contradictions = ContradictionFigures()
    for question, answer in zip(questions, answers, strict=True):
        score = score_question(answer.ranked, question.gold_message_ids)
        if score is None:
            no_gold += 1
            no_gold_empty += not answer.ranked
        else:
            scores.append(score)
        pair = question.id_pair(UPDATE_KEYS)
        if pair is not None and set(pair[0]) & set(pair[1]):
            updates.same_message += 1  # the update is in the original message itself
        elif pair is not None:
            outcome: UpdateOutcome = update_outcome(answer.ranked, pair[0], pair[1])
            updates.questions += 1
            setattr(updates, outcome, getattr(updates, outcome) + 1)
        pair = question.id_pair(CONTRADICTION_KEYS)
        if pair is not None:
            contradictions.questions += 1
            contradictions.both_in_top10 += both_present(answer.ranked, pair[0], pair[1])
    count = len(scores)

    def mean(values: Iterable[float]) -> float | None:
        """The average over the scored questions; None (not 0) when there are none."""
        return sum(values) / count if count else None

    totals = [a.total_ms for a in answers]
    dbs = [a.db_ms for a in answers if a.db_ms is not None]
    return Metrics(
        questions=len(questions),
        scored=count,
        recall_any={k: mean(s.recall_any[k] for s in scores) for k in KS},
        recall_all={k: mean(s.recall_all[k] for s in scores) for k in KS},
        ndcg_at_10=mean(s.ndcg for s in scores),
        precision_at_10=mean(s.precision for s in scores),
        no_gold=no_gold,
        no_gold_empty=no_gold_empty,
        empty_on_no_gold=share(no_gold_empty, no_gold),
        latency_ms_p50=percentile(totals, 50),
        latency_ms_p95=percentile(totals, 95),
        db_ms_p50=percentile(dbs, 50) if has_db else None,
        db_ms_p95=percentile(dbs, 95) if has_db else None,
        updates=updates,
        contradictions=contradictions,
    )
