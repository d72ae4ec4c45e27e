"""The context evaluation without a database: its sets, its offline summariser, its report and
its command line's checks."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.errors import InvalidInputError
from graphmem.models.consolidation import Cluster, ClusterFact
from graphmem_bench.evaluation import context
from graphmem_bench.evaluation.context_report import (
    ArmFigures,
    ContextReport,
    ContextSetReport,
    render_context,
)
from graphmem_bench.evaluation.context_sets import (
    FACT_SPAN,
    SummarisingProposer,
    bench_facts,
    context_sets,
    extractive_summary,
)

NOW = datetime(2024, 6, 1, tzinfo=UTC)


def _cluster(*texts: str) -> Cluster:
    facts = tuple(
        ClusterFact(number=n, id=f"f{n}", ns="t", text=text, status="active", recorded_at=NOW)
        for n, text in enumerate(texts, start=1)
    )
    return Cluster(index=1, facts=facts)


def test_an_extractive_summary_holds_a_share_of_every_member() -> None:
    texts = ["word " * 400, "My marathon plan: a long run on Sunday.", "x" * 50]
    summary = extractive_summary(texts, limit=300)
    parts = summary.split("; ")
    assert len(parts) == 3 and len(summary) <= 300 + 2 * 5
    assert parts[0].endswith("...") and len(parts[0]) <= 100 + 3
    assert parts[1] == "My marathon plan: a long run on Sunday."
    assert extractive_summary(["a  b\n c"]) == "a b c"


def test_the_offline_proposer_summarises_every_member_and_merges_nothing_new() -> None:
    proposer = SummarisingProposer()
    assert proposer.name == "heuristic+extractive" and proposer.model is None
    assert proposer.label == "summaries (extractive, no LLM)"
    cluster = _cluster("I run on Sundays.", "I run on Tuesdays.", "I run on Thursdays.")
    proposal = proposer.summarize(cluster)
    assert proposal.operations == [
        {
            "op": "SUMMARIZE",
            "facts": [1, 2, 3],
            "text": "I run on Sundays.; I run on Tuesdays.; I run on Thursdays.",
            "reason": "extractive",
        }
    ]
    assert proposer.propose(_cluster("I like tea.", "The bus was late.")).operations == []


def test_the_bench_facts_are_one_conversation_with_the_newest_fact_as_gold() -> None:
    data = bench_facts(50, 10)
    assert data.name == "bench-facts" and len(data.messages) == 50 and len(data.questions) == 10
    ids = {m.message_id for m in data.messages}
    times = [m.time for m in data.messages]
    assert times == sorted(times) and times[-1] - times[0] > FACT_SPAN * 0.9
    for question in data.questions:
        (gold,) = question.gold_message_ids
        assert gold in ids and question.question_time > times[-1]
    assert bench_facts(50, 10) == data


def test_unknown_or_missing_sets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no context set nope"):
        context_sets(tmp_path, ("nope",))
    with pytest.raises(InvalidInputError, match="needs"):
        context_sets(tmp_path, ("beam-1-10",))
    (only,) = context_sets(tmp_path, ("bench-facts",))
    assert only.name == "bench-facts" and not only.speakers


def test_the_command_line_refuses_an_unknown_set_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(context, "measuring_run", refuse)
    result = CliRunner().invoke(main, ["eval", "context", str(tmp_path), "--sets", "beam,nope"])
    assert result.exit_code == 2 and "no set beam, nope" in result.output


def _arm(name: str, any_gold: int) -> ArmFigures:
    return ArmFigures(
        name=name, label=name, questions=4, all_gold=1, any_gold=any_gold, any_own_line=any_gold
    )


def test_the_report_puts_the_sets_side_by_side() -> None:
    sets = [
        ContextSetReport(
            name=name,
            conversations=1,
            facts=10,
            merged=0,
            history_questions=4,
            measured_questions=4,
            arms=[_arm("baseline", 2), _arm("tiers", base)],
            details=[],
            wall_seconds=1.0,
        )
        for name, base in (("a", 3), ("b", 1))
    ]
    report = ContextReport(
        graphmem_version="0",
        started_at=NOW,
        finished_at=NOW,
        wall_seconds=2.0,
        server="scratch",
        embedder="test",
        summariser="extractive, no LLM",
        namespace_prefix="eval-context-test",
        budget_tokens=1000,
        k=20,
        max_questions=None,
        max_conversations=None,
        sets=sets,
    )
    text = render_context(report)
    assert "| arm | a | b | mean |" in text
    assert "| baseline | 0.500 | 0.500 | 0.500 |" in text
    assert "| tiers | 0.750 | 0.250 | 0.500 |" in text
    assert "## a" in text and "## b" in text
