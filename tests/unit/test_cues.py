"""The cues recall reads from a question: the periods it names and whether it is about the
user (graphmem.core.recall.cues)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem.core.recall.cues import Cues, about_the_user, names_period, past_facts, periods
from graphmem.core.recall.ranking import Candidate

# A Wednesday afternoon.
NOW = datetime(2024, 3, 20, 15, 0, tzinfo=UTC)


def _days(question: str) -> list[tuple[str, str]]:
    return [(p.start.date().isoformat(), p.end.date().isoformat()) for p in periods(question, NOW)]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I say yesterday?", [("2024-03-19", "2024-03-20")]),
        ("what did we plan this morning", [("2024-03-20", "2024-03-21")]),
        ("What happened on March 3?", [("2024-03-03", "2024-03-04")]),
        ("the 3rd of March 2023", [("2023-03-03", "2023-03-04")]),
        ("notes from 2024-02-29", [("2024-02-29", "2024-03-01")]),
        # A date later in the year than the question is last year's.
        ("what happened on December 24?", [("2023-12-24", "2023-12-25")]),
        ("in December", [("2023-12-01", "2024-01-01")]),
        ("in March", [("2024-03-01", "2024-04-01")]),
        ("what did we decide last week", [("2024-03-11", "2024-03-18")]),
        ("anything this week?", [("2024-03-18", "2024-03-25")]),
        ("last month", [("2024-02-01", "2024-03-01")]),
        ("the past month", [("2024-02-19", "2024-03-20")]),
        ("last year", [("2023-01-01", "2024-01-01")]),
        ("what did she say 3 days ago", [("2024-03-16", "2024-03-18")]),
        ("a couple of weeks ago", [("2024-03-04", "2024-03-08")]),
        ("last Tuesday", [("2024-03-19", "2024-03-20")]),
        ("on Wednesday", [("2024-03-13", "2024-03-14")]),
    ],
)
def test_periods_named_in_a_question(question: str, expected: list[tuple[str, str]]) -> None:
    assert _days(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "What is the capital of Portugal?",
        "February 30",  # no such day
        "notes from 2024-13-01",  # no such month
        "May I ask about my tent?",  # "May" without a day
        "I may come over",
    ],
)
def test_questions_that_name_no_period(question: str) -> None:
    assert periods(question, NOW) == ()


def test_a_period_holds_its_start_and_not_its_end() -> None:
    (day,) = periods("yesterday", NOW)
    assert day.holds(datetime(2024, 3, 19, tzinfo=UTC))
    assert day.holds(datetime(2024, 3, 19, 23, 59, tzinfo=UTC))
    assert not day.holds(datetime(2024, 3, 20, tzinfo=UTC))


def test_a_question_in_the_first_person_is_about_the_user() -> None:
    assert about_the_user("Where did I say I live?")
    assert about_the_user("what's my sister's name")
    assert about_the_user("I'm looking for the tent we talked about")
    assert not about_the_user("What is Melanie's dog called?")
    assert not about_the_user("Which tent is lighter?")


def test_the_factor_raises_hits_in_a_named_period_and_users_messages() -> None:
    cues = Cues.read("What did I say yesterday?", NOW)
    yesterday, earlier = datetime(2024, 3, 19, 10, tzinfo=UTC), datetime(2024, 3, 1, tzinfo=UTC)
    weights = {"time_weight": 0.2, "user_weight": 0.1}
    assert cues.factor(yesterday, "user", **weights) == pytest.approx(1.2 * 1.1)
    assert cues.factor(yesterday, "assistant", **weights) == pytest.approx(1.2)
    assert cues.factor(earlier, "user", **weights) == pytest.approx(1.1)
    assert cues.factor(None, None, **weights) == 1.0
    # Off: the weights at 0 leave every score as it was.
    assert cues.factor(yesterday, "user", time_weight=0.0, user_weight=0.0) == 1.0
    # A question in the third person raises no speaker.
    third = Cues.read("What did Melanie say yesterday?", NOW)
    assert third.factor(earlier, "user", **weights) == 1.0


def _ms(year: int, month: int, day: int = 1) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp() * 1000)


#: Valid from January to May 2024, from May 2024 on, and no valid time at all.
JAN_TO_MAY = {"from": _ms(2024, 1, 5), "to": _ms(2024, 5, 1)}
FROM_MAY = {"from": _ms(2024, 5, 1), "to": None}
OPEN: dict[str, int | None] = {"from": None, "to": None}


def test_a_fact_counts_in_a_period_by_its_valid_time_else_when_it_was_recorded() -> None:
    march = Cues.read("Where did I work in March?", NOW)  # March 2024
    recorded_in_march = datetime(2024, 3, 10, tzinfo=UTC)
    recorded_later = datetime(2024, 6, 1, tzinfo=UTC)
    assert march.in_period(recorded_later, JAN_TO_MAY)  # true in March, recorded in June
    assert not march.in_period(recorded_in_march, FROM_MAY)  # recorded in March, true later
    assert march.in_period(recorded_in_march, OPEN) and not march.in_period(recorded_later, OPEN)
    assert march.in_period(recorded_later, {"from": None, "to": _ms(2024, 3, 2)})
    assert not march.in_period(recorded_later, {"from": None, "to": _ms(2024, 3, 1)})
    weights = {"time_weight": 0.5, "user_weight": 0.0}
    assert march.factor(recorded_later, None, JAN_TO_MAY, **weights) == pytest.approx(1.5)
    assert march.factor(recorded_in_march, None, FROM_MAY, **weights) == 1.0
    assert names_period("Where did I work in March?", NOW, 0.2)
    assert not names_period("Where did I work in March?", NOW, 0.0)
    assert not names_period("Where do I work?", NOW, 0.2)


def _briefs() -> dict[str, dict[str, object]]:
    at = _ms(2024, 6, 1)
    return {
        "globex": {"at": at, "status": "active", "valid": FROM_MAY},
        "acme": {"at": at, "status": "superseded", "valid": JAN_TO_MAY},
        "merged": {"at": at, "status": "merged", "valid": JAN_TO_MAY},
        "older": {"at": at, "status": "superseded", "valid": {"from": None, "to": _ms(2024, 1)}},
    }


def test_a_superseded_fact_true_in_the_period_becomes_a_candidate_of_its_own() -> None:
    fused = [Candidate("fact", "globex", fused=0.9), Candidate("episode", "m1", fused=0.5)]
    through = {"globex": ["acme", "merged", "older"]}
    march = Cues.read("Where did I work in March?", NOW)
    out = march.with_past_facts(fused, through, _briefs(), {}, time_weight=0.2)
    # Only the superseded fact true in March, just before the fact that replaced it, with its
    # fused score; the rest as they were.
    assert [(c.kind, c.id) for c in out] == [
        ("fact", "acme"), ("fact", "globex"), ("episode", "m1"),
    ]  # fmt: skip
    assert out[0].fused == 0.9 and out[0].matched is None
    assert past_facts(["acme", "globex"], through) == ["acme"]
    # The successor true in the period itself, no period, or no time weight: nothing added.
    june = Cues.read("Where did I work in June?", NOW.replace(month=7))
    assert len(june.with_past_facts(fused, through, _briefs(), {}, time_weight=0.2)) == 2
    plain = Cues.read("Where do I work?", NOW)
    assert len(plain.with_past_facts(fused, through, _briefs(), {}, time_weight=0.2)) == 2
    assert len(march.with_past_facts(fused, through, _briefs(), {}, time_weight=0.0)) == 2
    # A successor found only through what it replaced is judged by its head_valid.
    briefs = {k: v for k, v in _briefs().items() if k != "globex"}
    out = march.with_past_facts(fused, through, briefs, {"globex": FROM_MAY}, time_weight=0.2)
    assert [c.id for c in out][:2] == ["acme", "globex"]
    during = {"globex": {"from": _ms(2024, 2, 1), "to": None}}
    assert len(march.with_past_facts(fused, through, briefs, during, time_weight=0.2)) == 2
