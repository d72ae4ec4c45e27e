"""Precision, empty on no gold, the calibration table, the hit rows a calibration is fitted
on, and the times of messages that share one: hand-made cases, without a database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem_bench.evaluation.calibration import calibration, clip, hit_record, hit_rows
from graphmem_bench.evaluation.conversations import spread_ties
from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion
from graphmem_bench.evaluation.metrics import Answer, precision, score_question, summarize
from graphmem_bench.evaluation.report import checks, render_suite, suite_checks
from graphmem_bench.evaluation.results import (
    ConfigurationResult,
    EvalReport,
    QuestionRecord,
    SetReport,
    SuiteReport,
)

AT = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def test_precision_is_the_share_of_the_returned_messages_that_are_gold() -> None:
    assert precision(["a", "x", "b", "y"], ["a", "b", "c"]) == 0.5
    assert precision(["a"], ["a", "b"]) == 1.0  # one returned, and it is gold
    assert precision([], ["a"]) == 0.0  # an answer existed and nothing came back
    assert precision(["a", "a", "x"], ["a"]) == 0.5  # each message once
    # at most ten messages count: the gold one at rank 11 earns nothing
    assert precision([*(f"x{i}" for i in range(10)), "a"], ["a"]) == 0.0
    assert precision(["a", *(f"x{i}" for i in range(9))], ["a"]) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="gold"):
        precision(["a"], [])
    score = score_question(["x", "a"], ["a"])
    assert score is not None and score.precision == 0.5


def _question(gold: list[str], category: str = "c") -> EvalQuestion:
    return EvalQuestion(
        conversation_id="c1",
        question="Which?",
        question_time=AT,
        gold_message_ids=tuple(gold),
        category=category,
    )


def test_precision_and_empty_on_no_gold_are_averaged_over_their_questions() -> None:
    questions = [_question(["a"]), _question(["b"]), _question([]), _question([]), _question([])]
    answers = [
        Answer(["a", "x"], 1.0, 0.5),  # precision 0.5
        Answer([], 1.0, 0.5),  # precision 0
        Answer([], 1.0, 0.5),  # no gold, empty
        Answer(["y"], 1.0, 0.5),  # no gold, not empty
        Answer([], 1.0, 0.5),  # no gold, empty
    ]
    m = summarize(questions, answers, True)
    assert m.scored == 2 and m.precision_at_10 == pytest.approx(0.25)
    assert (m.no_gold, m.no_gold_empty) == (3, 2)
    assert m.empty_on_no_gold == pytest.approx(2 / 3)
    only_gold = summarize(questions[:2], answers[:2], True)
    assert only_gold.empty_on_no_gold is None  # no question without gold: no share
    nothing_scored = summarize(questions[2:], answers[2:], True)
    assert nothing_scored.precision_at_10 is None


def test_calibration_bands_clip_the_score_and_compare_it_with_the_share_of_gold() -> None:
    rows = [
        {"score": 0.05, "gold": False},
        {"score": 0.15, "gold": True},
        {"score": 0.12, "gold": False},
        {"score": 0.3, "gold": True},  # 0.29999... as a float: still the band 0.3-0.4
        {"score": 1.0, "gold": True},  # the last band holds 1.0
        {"score": 2.09, "gold": False},  # clipped to 1.0
        {"score": -0.4, "gold": False},  # clipped to 0.0
    ]
    bands = calibration(rows)
    assert [(b.low, b.high) for b in bands][:2] == [(0.0, 0.1), (0.1, 0.2)]
    assert len(bands) == 10 and bands[-1].high == 1.0
    assert [b.hits for b in bands] == [2, 2, 0, 1, 0, 0, 0, 0, 0, 2]
    assert bands[0].mean_score == pytest.approx(0.025) and bands[0].gold_share == 0.0
    assert bands[1].mean_score == pytest.approx(0.135) and bands[1].gold_share == 0.5
    assert bands[2].mean_score is None and bands[2].gold_share is None
    assert bands[3].gold_share == 1.0
    assert bands[9].mean_score == 1.0 and bands[9].gold_share == 0.5
    assert clip(-3) == 0.0 and clip(0.4) == 0.4 and clip(7) == 1.0
    assert sum(b.hits for b in calibration([])) == 0


def _report(records: list[QuestionRecord]) -> EvalReport:
    now = datetime.now(UTC)
    metrics = summarize([_question(["a"])], [Answer(["a"], 1.0, 0.5)], True)
    return EvalReport(
        graphmem_version="0",
        started_at=now,
        finished_at=now,
        wall_seconds=1.0,
        server="test",
        embedder="test",
        namespace_prefix="eval-test",
        k=10,
        conversations=1,
        messages=2,
        user_messages=2,
        merged_messages=0,
        questions=len(records),
        configurations=[
            ConfigurationResult(name="default", description="", overall=metrics, by_category={})
        ],
        details=records,
    )


def _records() -> list[QuestionRecord]:
    scores: dict[str, Any] = {"vector": 0.61, "vector_rank": 1, "fulltext": None, "final": 0.7}
    return [
        QuestionRecord(
            conversation_id="c1",
            question="Where do I live?",
            category="single-hop",
            gold=("m2",),
            ranked={"default": ["m1", "m2"], "bm25": ["m2"]},
            hits={
                "default": [
                    hit_record("episode", ["m1"], 0.7, scores, ["m2"]),
                    hit_record("fact", ["m3", "m2"], 0.4, {"vector": 0.3}, ["m2"]),
                ],
                "vector-only": [hit_record("episode", ["m2"], 0.9, {"vector": 0.8}, ["m2"])],
            },
        ),
        QuestionRecord(
            conversation_id="c1",
            question="What is my cat called?",
            category="adversarial",
            gold=(),
            hits={"default": [hit_record("episode", ["m1"], 0.2, {"vector": 0.1}, [])]},
        ),
    ]


def test_hit_rows_flatten_every_hit_of_a_report_or_its_json() -> None:
    report = _report(_records())
    rows = hit_rows(report)
    assert len(rows) == 4  # the baselines keep no hits
    first = rows[0]
    assert first == {
        "vector": 0.61,
        "vector_rank": 1,
        "final": 0.7,
        "set": "data",
        "configuration": "default",
        "conversation_id": "c1",
        "question": "Where do I live?",
        "category": "single-hop",
        "has_gold": True,
        "rank": 1,
        "kind": "episode",
        "ids": ["m1"],
        "gold": False,
        "score": 0.7,
    }  # a breakdown field that was not set (fulltext) is absent
    assert [(r["configuration"], r["rank"], r["gold"]) for r in rows] == [
        ("default", 1, False),
        ("default", 2, True),  # a fact is gold when one of its messages is
        ("vector-only", 1, True),
        ("default", 1, False),  # a hit of a question without gold is never gold
    ]
    assert rows[3]["has_gold"] is False
    # results.json as loaded gives the same rows; a suite names each set
    assert hit_rows(json.loads(report.model_dump_json())) == rows
    now = datetime.now(UTC)
    suite = SuiteReport(
        graphmem_version="0",
        started_at=now,
        finished_at=now,
        wall_seconds=1.0,
        sets=[SetReport(name="locomo-dev", report=report)],
    )
    suite_rows = hit_rows(json.loads(suite.model_dump_json()), configuration="default")
    assert [r["set"] for r in suite_rows] == ["locomo-dev"] * 3
    assert calibration(suite_rows)[2].hits == 1  # the 0.2 hit


def _message(mid: str, at: datetime) -> EvalMessage:
    return EvalMessage(
        conversation_id="c1", session_id="s1", message_id=mid, role="user", time=at, text=mid
    )


def test_messages_sharing_a_time_are_spread_in_their_order() -> None:
    second = timedelta(seconds=1)
    messages = [
        _message("a", AT),
        _message("b", AT),
        _message("c", AT),
        _message("d", AT + timedelta(days=1)),
        _message("e", AT + timedelta(days=1, seconds=1)),
        _message("f", AT + timedelta(days=1, seconds=1)),
        _message("g", AT + timedelta(days=1, seconds=1)),
        _message("h", AT + timedelta(days=1, seconds=2)),
    ]
    times = spread_ties(messages)
    assert times["a"] == AT and times["b"] == AT + second and times["c"] == AT + 2 * second
    assert times["d"] == AT + timedelta(days=1)
    # three messages one second before the next one: a third of a second apart
    e = AT + timedelta(days=1, seconds=1)
    third = second / 3
    assert times["e"] == e and times["f"] == e + third and times["g"] == e + third * 2
    assert times["h"] == AT + timedelta(days=1, seconds=2)
    assert list(times) == [m.message_id for m in messages]
    assert sorted(times.values()) == list(times.values())  # time order is the given order
    assert spread_ties([]) == {}


def test_the_database_time_check_reads_the_ratio_to_vector_only() -> None:
    report = _report(_records())
    assert not [line for line in checks(report) if "database time" in line]  # no ratio
    slow = report.model_copy(update={"db_p95_ratio": 2.0})
    fast = report.model_copy(update={"db_p95_ratio": 1.2})
    assert checks(slow)[-1].startswith("fail: default p95 database time 2.00x vector-only's")
    assert checks(fast)[-1].startswith("pass: default p95 database time 1.20x")
    now = datetime.now(UTC)
    suite = SuiteReport(
        graphmem_version="0",
        started_at=now,
        finished_at=now,
        wall_seconds=1.0,
        sets=[SetReport(name="a", report=slow), SetReport(name="b", report=fast)],
    )
    lines = [line for line in suite_checks(suite) if "database time" in line]
    assert [line.split(" p95")[0] for line in lines] == ["fail: a: default", "pass: b: default"]
    text = render_suite(suite)
    assert "| a | 0.5 / 0.5 | - | 2.00x |" in text  # no vector-only in this report
