"""Hit scores against gold: the rows a calibration of ``hit.score`` is fitted on, and the
table that shows how well the score predicts a gold hit.

Every recall of an evaluation keeps its hits (:attr:`QuestionRecord.hits`): for each hit, best
first, its kind, its message ids, whether one of them is a gold message of the question, its
``score`` and its ``scores`` breakdown (the fields of :class:`graphmem.models.Scores` that are
set: ``vector``, ``vector_rank``, ``fulltext``, ``fulltext_rank``, ``fused``, ``recency``,
``cue``, ``lexical``, ``final``, ...). A question without gold messages keeps its hits too:
each is a hit that answers nothing.

:func:`hit_rows` flattens a run's results (the report, or ``results.json`` as loaded with
:func:`json.load`) into one dict per hit; :func:`calibration` buckets hits by score into ten
bands of width 0.1 and gives, per band, the number of hits, their mean score (the predicted
share of gold) and the observed share of gold. A score outside [0, 1] is clipped to it for
both the band and the mean, so the table is defined whatever scale ``hit.score`` is on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphmem_bench.evaluation.results import Band, EvalReport, SuiteReport

#: The calibration table's bands: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0].
BANDS = 10


#: Decimal places a kept score keeps (the report holds every hit of every recall).
PLACES = 6


def _kept(value: Any) -> Any:
    return round(value, PLACES) if isinstance(value, float) else value


def hit_record(
    kind: str, ids: Sequence[str], score: float, scores: Mapping[str, Any], gold: Iterable[str]
) -> dict[str, Any]:
    """What a run keeps of one hit: its kind, message ids, score, breakdown (the fields set)
    and whether one of its messages is gold; scores to :data:`PLACES` decimal places."""
    return {
        "kind": kind,
        "ids": list(ids),
        "gold": bool(set(ids) & set(gold)),
        "score": _kept(score),
        "scores": {key: _kept(value) for key, value in scores.items() if value is not None},
    }


def _sets(results: SuiteReport | EvalReport | Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(set name, report as a dict) for a suite or a single-set report."""
    if isinstance(results, SuiteReport | EvalReport):
        results = results.model_dump(mode="json")
    if "sets" in results:
        return [(s["name"], s["report"]) for s in results["sets"]]
    return [("data", results)]


def hit_rows(
    results: SuiteReport | EvalReport | Mapping[str, Any], configuration: str | None = None
) -> list[dict[str, Any]]:
    """One row per hit of every question and recall configuration (or only ``configuration``).

    ``results`` is a run's report or its ``results.json`` loaded as is (a single set or
    several). Each row holds ``set``, ``configuration``, ``conversation_id``, ``question``,
    ``category``, ``has_gold`` (the question has gold messages), ``rank`` (1-based, the hit's
    place in recall's list), ``kind``, ``ids``, ``gold`` (one of the hit's messages is gold)
    and ``score``, then every field of the hit's ``scores`` breakdown under its own name
    (``vector``, ``fulltext``, ``fused``, ``lexical``, ``cue``, ``recency``, ``final``,
    ``vector_rank``, ``fulltext_rank``, ...; absent when the hit had none). The baselines
    computed outside Neo4j have no hits and give no rows.
    """
    rows = []
    for set_name, report in _sets(results):
        for record in report["details"]:
            for name, hits in record.get("hits", {}).items():
                if configuration is not None and name != configuration:
                    continue
                for rank, hit in enumerate(hits, start=1):
                    rows.append(
                        {
                            **hit["scores"],
                            "set": set_name,
                            "configuration": name,
                            "conversation_id": record["conversation_id"],
                            "question": record["question"],
                            "category": record["category"],
                            "has_gold": bool(record["gold"]),
                            "rank": rank,
                            "kind": hit["kind"],
                            "ids": hit["ids"],
                            "gold": hit["gold"],
                            "score": hit["score"],
                        }
                    )
    return rows


def clip(score: float) -> float:
    """``score`` clipped to [0, 1]."""
    return min(max(score, 0.0), 1.0)


def calibration(rows: Iterable[Mapping[str, Any]]) -> list[Band]:
    """The hits of ``rows`` (each with ``score`` and ``gold``) by score band: ten bands of
    width 0.1 over the score clipped to [0, 1] (1.0 falls in the last), each with its number
    of hits, mean clipped score and share of gold (None for an empty band)."""
    counts, sums, golds = [0] * BANDS, [0.0] * BANDS, [0] * BANDS
    for row in rows:
        score = clip(float(row["score"]))
        # The small margin puts a score such as 0.3 (0.29999... as a float) in its own band.
        band = min(int(score * BANDS + 1e-9), BANDS - 1)
        counts[band] += 1
        sums[band] += score
        golds[band] += bool(row["gold"])
    return [
        Band(
            low=band / BANDS,
            high=(band + 1) / BANDS,
            hits=counts[band],
            mean_score=sums[band] / counts[band] if counts[band] else None,
            gold_share=golds[band] / counts[band] if counts[band] else None,
        )
        for band in range(BANDS)
    ]
