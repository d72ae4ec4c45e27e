"""`run_eval` end to end on a tiny hand-written dataset against the test Neo4j."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.models import Hit
from graphmem.settings import GraphmemSettings
from graphmem_bench.evaluation.calibration import calibration, hit_rows
from graphmem_bench.evaluation.configs import Configuration
from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion
from graphmem_bench.evaluation.report import render_markdown, render_suite
from graphmem_bench.evaluation.results import EvalReport
from graphmem_bench.evaluation.runner import EvalOptions, run_eval, run_sets
from graphmem_bench.evaluation.sets import DataSet

START = datetime(2023, 3, 1, 9, 0, tzinfo=UTC)
ASKED = START + timedelta(days=60)

C1 = [
    ("m1", "user", "My sister Philippa breeds axolotls in Reykjavik."),
    ("m2", "assistant", "That sounds like a fascinating hobby."),
    ("m3", "user", "I bought a new bicycle yesterday, a blue one."),
    ("m4", "assistant", "A bicycle is a great choice for commuting to the office."),
    ("m5", "user", "I repainted my bicycle red last week."),
    ("m6", "user", "I work as a nurse at the city hospital."),
]
C2 = [
    ("n1", "user", "Axolotls from Reykjavik are the strangest pets I know."),
    ("n2", "assistant", "They can regrow their limbs."),
]


def _messages(conversation: str, rows: list[tuple[str, str, str]]) -> list[EvalMessage]:
    return [
        EvalMessage(
            conversation_id=conversation,
            session_id="s1" if i < 4 else "s2",
            message_id=mid,
            role=role,
            time=START + timedelta(days=10 * i),
            text=text,
        )
        for i, (mid, role, text) in enumerate(rows)
    ]


def _question(text: str, gold: list[str], category: str, **extra: list[str]) -> EvalQuestion:
    return EvalQuestion(
        conversation_id="c1",
        question=text,
        question_time=ASKED,
        gold_message_ids=tuple(gold),
        category=category,
        extra=extra or None,
    )


def _delete(graph: Graph, prefix: str) -> None:
    """Remove a run's namespaces."""
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $prefix DETACH DELETE n",
        prefix=prefix,
        database_=graph.database,
    )


def _reverse(hits: Sequence[Hit]) -> list[Hit]:
    return list(reversed(hits))


QUESTIONS = [
    _question("Who breeds axolotls in Reykjavik?", ["m1"], "rare-words"),
    _question(
        "What colour is my bicycle?",
        ["m3", "m5"],
        "update",
        original_ids=["m3"],
        updated_ids=["m5"],
    ),
    _question("Which reply talked about commuting to the office?", ["m4"], "assistant"),
    _question("What is the name of my favourite opera singer?", [], "no-gold"),
]


@pytest.fixture(scope="module")
def report(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> Iterator[EvalReport]:
    lines: list[str] = []
    result = run_eval(
        _messages("c1", C1) + _messages("c2", C2),
        QUESTIONS,
        EvalOptions(server="configured", warmup=2),
        settings=test_settings,
        target=graph.target,
        embedder=embedder,
        progress=lines.append,
        extra=[Configuration("reversed", "default, hits reversed", rerank=_reverse)],
    )
    assert any("ingested conversation 'c1'" in line for line in lines)
    yield result
    _delete(graph, result.namespace_prefix)


def test_every_configuration_is_reported(report: EvalReport) -> None:
    names = [c.name for c in report.configurations]
    assert names == [
        "default",
        "vector-only",
        "fulltext-only",
        "fusion-rrf",
        "fusion-linear",
        "next-credit-off",
        "update-order-off",
        "recency-off",
        "user-cue-off",
        "time-cue-off",
        "gate-off",
        "user-only",
        "cosine-exact",
        "bm25",
        "rrf-plain",
        "reversed",
    ]
    assert report.conversations == 2 and report.messages == 8 and report.questions == 4
    assert report.user_messages == 5 and report.merged_messages == 0
    for config in report.configurations:
        overall = config.overall
        assert overall.questions == 4 and overall.scored == 3 and overall.no_gold == 1
        assert overall.updates.questions == 1
        u = overall.updates
        assert u.updated_above + u.original_above + u.tie + u.both_missing == 1
        assert set(config.by_category) == {"rare-words", "update", "assistant", "no-gold"}
        assert overall.latency_ms_p50 <= overall.latency_ms_p95


def test_the_only_message_with_the_rare_words_ranks_first(report: EvalReport) -> None:
    for config in report.configurations:
        if config.name in ("vector-only", "reversed"):
            continue  # a vector alone may miss; reversed puts the best hit last on purpose
        rare = config.by_category["rare-words"]
        assert rare.recall_any[1] == 1.0, config.name
        assert rare.ndcg_at_10 == pytest.approx(1.0), config.name


def test_conversations_stay_in_their_own_namespaces(report: EvalReport) -> None:
    own = {mid for mid, _, _ in C1}
    for record in report.details:
        for name, ranked in record.ranked.items():
            assert set(ranked) <= own, (name, ranked)
            assert len(ranked) == len(set(ranked))


def test_user_only_cannot_find_an_assistant_message(report: EvalReport) -> None:
    by_name = {c.name: c for c in report.configurations}
    assert by_name["default"].by_category["assistant"].recall_any[10] == 1.0
    assert by_name["bm25"].by_category["assistant"].recall_any[10] == 1.0
    assert by_name["user-only"].by_category["assistant"].recall_any[10] == 0.0
    user_ids = {mid for mid, role, _ in C1 if role == "user"}
    for record in report.details:
        assert set(record.ranked["user-only"]) <= user_ids


def test_without_the_gate_recall_always_returns_something(report: EvalReport) -> None:
    by_name = {c.name: c for c in report.configurations}
    assert by_name["gate-off"].overall.no_gold_empty == 0
    assert by_name["cosine-exact"].overall.no_gold_empty == 0
    # every question's list is cut at k, and all-evidence implies any-hit
    for config in report.configurations:
        m = config.overall
        any_k, all_k = m.recall_any, m.recall_all
        assert all(isinstance(any_k[k], float) and isinstance(all_k[k], float) for k in (1, 5, 10))
        assert all(all_k[k] <= any_k[k] for k in (1, 5, 10))  # type: ignore[operator]
        assert any_k[1] <= any_k[5] <= any_k[10]  # type: ignore[operator]


def test_markdown_report(report: EvalReport) -> None:
    text = render_markdown(report)
    assert "| default |" in text and "| bm25 |" in text
    assert "## Per category (default)" in text and "## Checks" in text
    matrix = text.split("## recall_any@10 by category and configuration")[1].split("##")[0]
    header = next(line for line in matrix.splitlines() if line.startswith("| category"))
    assert header.split("|")[2:-1] == [f" {c.name} " for c in report.configurations]
    categories = {cat for c in report.configurations for cat in c.by_category}
    rows = [row for row in matrix.splitlines() if row.startswith("| ") and row != header]
    assert len(rows) == len(categories)
    assert "## NDCG@10 by category and configuration" in text


def test_an_extra_configuration_can_reorder_the_hits(report: EvalReport) -> None:
    for record in report.details:
        assert record.ranked["reversed"] == list(reversed(record.ranked["default"]))


def test_precision_and_empty_on_no_gold_are_reported(report: EvalReport) -> None:
    for config in report.configurations:
        m = config.overall
        assert m.precision_at_10 is not None and 0.0 < m.precision_at_10 <= 1.0, config.name
        assert m.empty_on_no_gold == m.no_gold_empty / m.no_gold, config.name
    by_name = {c.name: c for c in report.configurations}
    # one gold message and the rest noise: precision is what the gate leaves
    assert by_name["gate-off"].overall.empty_on_no_gold == 0.0
    rare = by_name["default"].by_category["rare-words"]
    ranked = next(r for r in report.details if r.category == "rare-words").ranked["default"]
    assert rare.precision_at_10 == pytest.approx(1 / len(ranked))
    text = render_markdown(report)
    assert "precision@10" in text and "empty on no gold" in text
    assert "## Calibration of hit.score (default)" in text
    assert "## Database time: the default against vector-only" in text


def test_every_recall_keeps_its_hits_with_their_scores(report: EvalReport) -> None:
    """Each recall configuration keeps each hit's score, breakdown and gold mark, in the
    order of its ranked ids; the baselines keep none; the calibration table counts the
    default's hits."""
    baselines = {"cosine-exact", "bm25", "rrf-plain"}
    default_hits = 0
    for record in report.details:
        assert set(record.hits) == set(record.ranked) - baselines
        for name, hits in record.hits.items():
            ids = [i for hit in hits for i in hit["ids"]]
            assert list(dict.fromkeys(ids)) == record.ranked[name], name
            for hit in hits:
                assert hit["gold"] == bool(set(hit["ids"]) & set(record.gold))
                assert isinstance(hit["score"], float)
                assert {"vector", "fused", "final", "lexical"} <= set(hit["scores"])
        default_hits += len(record.hits["default"])
    assert sum(band.hits for band in report.calibration) == default_hits > 0
    rows = hit_rows(report, configuration="default")
    assert len(rows) == default_hits
    assert calibration(rows) == report.calibration
    assert report.db_p95_ratio is not None and report.db_p95_ratio > 0


def test_the_same_run_twice_gives_the_same_figures(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    """Two runs of one small set (new namespaces each time) rank every question alike under
    every configuration and give the same figures."""
    runs = []
    try:
        for _ in range(2):
            runs.append(
                run_eval(
                    _messages("c1", C1) + _messages("c2", C2),
                    QUESTIONS,
                    EvalOptions(server="configured", warmup=1, only=("fulltext-only", "bm25")),
                    settings=test_settings,
                    target=graph.target,
                    embedder=embedder,
                )
            )
        first, second = runs
        assert [r.ranked for r in first.details] == [r.ranked for r in second.details]
        for c1, c2 in zip(first.configurations, second.configurations, strict=True):
            assert c1.overall.recall_any == c2.overall.recall_any
            assert c1.overall.ndcg_at_10 == c2.overall.ndcg_at_10
            assert c1.overall.precision_at_10 == c2.overall.precision_at_10
        for a, b in zip(first.details, second.details, strict=True):
            for name, hits in a.hits.items():
                again = b.hits[name]
                assert [h["ids"] for h in hits] == [h["ids"] for h in again]
                for h, g in zip(hits, again, strict=True):
                    assert h["scores"]["vector"] == pytest.approx(g["scores"]["vector"])
    finally:
        for one in runs:
            _delete(graph, one.namespace_prefix)


# --- several sets, and questions asked at their own turn ---------------------------------------
PARROT = [
    ("p1", "user", "I adopted a parrot called Kiwi."),
    ("p2", "assistant", "Kiwi is a lovely name for a parrot."),
    ("p3", "user", "What is my parrot called again?"),
    ("p4", "user", "My parrot is called Mango now, the kids renamed her."),
]


def _asked_at_own_turn() -> DataSet:
    messages = _messages("parrots", PARROT)
    question = EvalQuestion(
        conversation_id="parrots",
        question="What is my parrot called?",
        question_time=ASKED,
        gold_message_ids=("p1",),
        category="own-turn",
        extra={"own_turn_id": "p3"},
    )
    return DataSet("parrots", messages, [question])


def test_several_sets_side_by_side_each_question_seeing_only_its_past(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    """Two sets in one run: each reported under its name, the held-out one apart; a question
    naming its own turn is recalled (and ranked by every baseline) as of that turn, so neither
    the turn itself nor a later message can be found."""
    axolotls = DataSet("axolotls", _messages("c1", C1), QUESTIONS[:2])
    held = _asked_at_own_turn()
    held = DataSet(held.name, held.messages, held.questions, held_out=True)
    suite = run_sets(
        [axolotls, held],
        EvalOptions(server="configured", warmup=0, only=("vector-only", "bm25", "rrf-plain")),
        settings=test_settings,
        target=graph.target,
        embedder=embedder,
    )
    try:
        assert [(s.name, s.held_out) for s in suite.sets] == [
            ("axolotls", False),
            ("parrots", True),
        ]
        parrots = suite.sets[1].report
        assert [c.name for c in parrots.configurations] == [
            "default",
            "vector-only",
            "bm25",
            "rrf-plain",
        ]
        (record,) = parrots.details
        for name, ranked in record.ranked.items():
            assert "p3" not in ranked and "p4" not in ranked, (name, ranked)
            assert ranked[0] == "p1", (name, ranked)
        assert suite.sets[0].report.namespace_prefix != parrots.namespace_prefix
        text = render_suite(suite)
        assert "| configuration | axolotls | parrots | mean (development) | mean (held out) |" in (
            text
        )
        assert "## Checks" in text and "rrf-plain" in text
        assert "## precision@10" in text and "## empty on no gold" in text
        assert "## parrots (held out)" in text and "**development sets, pooled**" in text
        assert set(suite.calibration) == {"development", "held out"}
        assert sum(b.hits for b in suite.calibration["held out"]) == sum(
            len(r.hits["default"]) for r in parrots.details
        )
    finally:
        for one in suite.sets:
            _delete(graph, one.report.namespace_prefix)


def test_a_session_sharing_one_time_keeps_its_order(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    """Two named speakers in one session that has one time (as LoCoMo dates its sessions): a
    question asked at its own turn sees the turns before it in the file, and none after."""
    rows = [
        ("t1", "Alice", "I adopted a parrot called Kiwi."),
        ("t2", "Bob", "A parrot! Kiwi is a lovely name."),
        ("t3", "Alice", "What is my parrot called again?"),
        ("t4", "Bob", "Your parrot is called Mango now, the kids renamed her."),
    ]
    messages = [
        EvalMessage(
            conversation_id="pair",
            session_id="s1",
            message_id=mid,
            role="user",
            speaker=speaker,
            time=START,
            text=text,
        )
        for mid, speaker, text in rows
    ]
    question = EvalQuestion(
        conversation_id="pair",
        question="What is Alice's parrot called?",
        question_time=START,
        gold_message_ids=("t1",),
        category="1",
        extra={"own_turn_id": "t3"},
    )
    report = run_eval(
        messages,
        [question],
        EvalOptions(server="configured", warmup=0, only=("vector-only", "bm25")),
        settings=test_settings,
        target=graph.target,
        embedder=embedder,
    )
    try:
        (record,) = report.details
        for name, ranked in record.ranked.items():
            assert set(ranked) <= {"t1", "t2"} and "t1" in ranked, (name, ranked)
        assert report.configurations[0].overall.recall_any[10] == 1.0
    finally:
        _delete(graph, report.namespace_prefix)
