"""`run_context` end to end on a tiny hand-written set against the test Neo4j: facts recorded
at their messages' times, a history of questions, and the four arms."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from graphmem_bench.evaluation.context import ContextEvalOptions, run_context
from graphmem_bench.evaluation.context_report import ContextReport, render_context
from graphmem_bench.evaluation.context_sets import ContextSet
from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion
from graphmem_bench.evaluation.sets import DataSet

ASKED = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)

#: (id, days before the questions, text): the bees are old enough to fade to the cold tier;
#: the three training days, recorded within a week, make a cluster to summarise.
MESSAGES = [
    ("bees", 200, "I keep three beehives on the roof of my apartment building."),
    ("sister", 150, "My sister lives in Ghent and teaches chemistry."),
    ("run-sun", 6, "My marathon training plan: a long run of 30 km every Sunday."),
    ("run-tue", 5, "My marathon training plan: a tempo run of 10 km every Tuesday."),
    ("run-thu", 4, "My marathon training plan: hill intervals every Thursday evening."),
    ("cook", 2, "I am cooking a mushroom risotto for dinner tonight."),
]

#: In time order (all asked at once, so in this order): history, measured, history, ...
QUESTIONS = [
    ("What do I cook tonight?", ["cook"]),
    ("Where do I keep my beehives?", ["bees"]),
    ("What is my marathon training plan?", ["run-sun", "run-tue", "run-thu"]),
    ("Which day is my marathon long run?", ["run-sun"]),
    ("What does my sister teach?", ["sister"]),
    ("What is my sister's job?", ["sister"]),
]


def _data() -> DataSet:
    messages = [
        EvalMessage(
            conversation_id="c1",
            session_id="s1",
            message_id=mid,
            role="user",
            time=ASKED - timedelta(days=days),
            text=text,
        )
        for mid, days, text in MESSAGES
    ]
    questions = [
        EvalQuestion(
            conversation_id="c1", question=text, question_time=ASKED, gold_message_ids=tuple(gold)
        )
        for text, gold in QUESTIONS
    ]
    return DataSet("tiny", messages, questions)


@pytest.fixture(scope="module")
def report(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> Iterator[ContextReport]:
    lines: list[str] = []
    result = run_context(
        [ContextSet(_data())],
        ContextEvalOptions(server="configured"),
        settings=test_settings.model_copy(update={"llm": None}),
        target=graph.target,
        embedder=embedder,
        progress=lines.append,
    )
    assert any("stored conversation 'c1': 6 facts" in line for line in lines)
    yield result
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix DETACH DELETE n",
        prefix=result.namespace_prefix,
        database_=graph.database,
    )


def test_every_arm_measures_the_same_questions(report: ContextReport) -> None:
    (tiny,) = report.sets
    assert [a.name for a in tiny.arms] == ["baseline", "tiers", "summaries", "both"]
    assert tiny.arms[2].label == "summaries (extractive, no LLM)"
    assert tiny.facts == 6 and tiny.merged == 0
    assert tiny.history_questions == 3 and tiny.measured_questions == 3
    assert [r.question for r in tiny.details] == [q for q, _ in QUESTIONS[1::2]]
    for record in tiny.details:
        assert set(record.shown) == {"baseline", "tiers", "summaries", "both"}


def test_the_tier_pass_leaves_the_faded_fact_out(report: ContextReport) -> None:
    """The bees, 200 days old and never used, fade to cold: the baseline's block holds them,
    the tier pass's does not; the sister's fact, as old but used by the history, stays."""
    (tiny,) = report.sets
    arms = {a.name: a for a in tiny.arms}
    bees = tiny.details[0]
    assert "bees" in bees.shown["baseline"] and "bees" in bees.shown["summaries"]
    assert "bees" not in bees.shown["tiers"] and "bees" not in bees.shown["both"]
    assert arms["baseline"].cold == 0 and arms["summaries"].cold == 0
    assert arms["tiers"].cold >= 1 and arms["both"].cold == arms["tiers"].cold
    assert "sister" in tiny.details[2].shown["tiers"]
    assert arms["baseline"].any_gold == 3
    assert arms["tiers"].any_gold == 2


def test_the_summary_pass_summarises_the_training_days(report: ContextReport) -> None:
    (tiny,) = report.sets
    arms = {a.name: a for a in tiny.arms}
    assert arms["baseline"].summaries == 0 and arms["tiers"].summaries == 0
    assert arms["summaries"].summaries == 1 and arms["both"].summaries == 1
    plan = tiny.details[1]
    for name in ("baseline", "summaries"):
        assert {"run-sun", "run-tue", "run-thu"} <= set(plan.shown[name]), name


def test_the_report_names_the_arms(report: ContextReport) -> None:
    text = render_context(report)
    assert "| arm | tiny | mean |" in text
    assert "| summaries (extractive, no LLM) |" in text
    assert "| baseline (no tier pass, no summaries) |" in text
    assert "## tiny" in text
