"""Consolidation's pure logic: validation of a plan, clusters, the watermark, the heuristic
proposer and the gate's refusals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from graphmem._text import normalised
from graphmem.core.consolidate.batch import independent
from graphmem.core.consolidate.clusters import Numbering, group, number
from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.consolidate.heuristic import HeuristicProposer
from graphmem.core.consolidate.progress import Gate, advance
from graphmem.core.consolidate.validate import parse_operations, validate_plan
from graphmem.models.consolidation import Cluster, ClusterEdge, ClusterFact, ProposedOperation

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _cluster(
    texts: list[str],
    *,
    statuses: dict[int, str] | None = None,
    edges: Sequence[ClusterEdge] = (),
    similar: Sequence[tuple[int, int, float]] = (),
) -> Cluster:
    statuses = statuses or {}
    facts = tuple(
        ClusterFact(
            number=i,
            id=f"f{i}",
            ns="ns",
            text=text,
            status=statuses.get(i, "active"),
            recorded_at=T0 + timedelta(minutes=i),
            new=True,
        )
        for i, text in enumerate(texts, start=1)
    )
    return Cluster(index=1, facts=facts, edges=tuple(edges), similar=tuple(similar))


def _ops(*items: tuple[str, list[int]]) -> list[ProposedOperation]:
    return [ProposedOperation(op=op, facts=facts, reason="r") for op, facts in items]  # type: ignore[arg-type]


def test_valid_operations_pass_and_bad_ones_are_rejected_with_their_reason() -> None:
    cluster = _cluster(["a", "b", "c", "d", "e"], statuses={5: "superseded"})
    accepted, rejected = validate_plan(
        cluster,
        _ops(
            ("SUPERSEDE", [2, 1]),
            ("MERGE", [3, 9]),  # unknown number
            ("RETRACT", [5]),  # retired
            ("CONTRADICT", [2, 4]),  # fact 2 already has an operation
            ("REFERENCE", [3, 4]),
            ("RESOLVE", [3, 4]),  # no open contradiction (and 3, 4 are taken)
            ("SUPERSEDE", [1]),  # wrong arity
        ),
        "ns",
    )
    assert [(a.op, a.facts) for a in accepted] == [
        ("SUPERSEDE", ("f2", "f1")),
        ("REFERENCE", ("f3", "f4")),
    ]
    reasons = [r.rejection for r in rejected]
    assert "unknown fact number 9" in reasons[0]
    assert "retired (superseded)" in reasons[1]
    assert "already has an operation" in reasons[2]
    assert "no open contradiction" in reasons[3]
    assert "takes [newer, older]" in reasons[4]


def test_a_supersedes_cycle_is_refused_whole() -> None:
    cluster = _cluster(["a", "b", "c"], edges=[ClusterEdge(type="SUPERSEDES", source=3, target=3)])
    accepted, rejected = validate_plan(
        cluster, _ops(("SUPERSEDE", [1, 2]), ("SUPERSEDE", [2, 1])), "ns"
    )
    assert accepted == []
    assert all("cycle" in r.rejection for r in rejected) and len(rejected) == 2


def test_resolve_needs_an_open_contradiction_and_contradict_refuses_a_second() -> None:
    edges = [ClusterEdge(type="CONTRADICTS", source=1, target=2, open=True)]
    cluster = _cluster(["a", "b", "c"], edges=edges)
    accepted, rejected = validate_plan(cluster, _ops(("CONTRADICT", [2, 1])), "ns")
    assert not accepted and "already have an open contradiction" in rejected[0].rejection
    accepted, rejected = validate_plan(cluster, _ops(("RESOLVE", [2, 1])), "ns")
    assert [a.op for a in accepted] == ["RESOLVE"] and not rejected


def test_a_fact_of_another_namespace_or_forgotten_is_refused() -> None:
    cluster = _cluster(["a", "b"])
    other = cluster.facts[1].model_copy(update={"ns": "other"})
    forgotten = cluster.facts[1].model_copy(update={"forgotten": True})
    for fact, why in ((other, "another namespace"), (forgotten, "forgotten")):
        changed = cluster.model_copy(update={"facts": (cluster.facts[0], fact)})
        _, rejected = validate_plan(changed, _ops(("MERGE", [1, 2])), "ns")
        assert why in rejected[0].rejection


def test_malformed_operations_are_rejected_alone() -> None:
    ops, rejected = parse_operations(
        [{"op": "MERGE", "facts": [1, 2]}, {"op": "DELETE", "facts": [1]}, "nonsense"], 1
    )
    assert [o.op for o in ops] == ["MERGE"]
    assert len(rejected) == 2 and rejected[0].op == "DELETE"


def test_clusters_join_the_most_similar_first_within_their_bound() -> None:
    pairs = [("n1", "o1", 0.9), ("n1", "o2", 0.8), ("n2", "o2", 0.7), ("n3", "o3", 0.6)]
    assert group(["n1", "n2", "n3"], pairs, 3) == [["n1", "o1", "o2"], ["n3", "o3"]]
    assert group(["n1", "n2", "n3"], pairs, 10) == [["n1", "o1", "o2", "n2"], ["n3", "o3"]]


def test_the_watermark_stops_before_the_first_fact_not_handled() -> None:
    new = [("a", 1), ("b", 2), ("c", 2), ("d", 3)]
    assert advance(new, {"a", "b", "c", "d"}) == 3
    assert advance(new, {"a", "b", "d"}) == 1  # c shares b's time: both must be handled
    assert advance(new, {"b", "c"}) is None


def test_cluster_numbers_follow_recording_order() -> None:
    rows = {
        "x": {
            "id": "x",
            "ns": "ns",
            "text": "later",
            "status": "active",
            "recorded_at": T0 + timedelta(hours=1),
        },
        "y": {"id": "y", "ns": "ns", "text": "earlier", "status": "active", "recorded_at": T0},
    }
    cluster = number(1, rows, ["x", "y"], {"x"}, [], [("x", "y", 0.8)])
    assert [f.id for f in cluster.facts] == ["y", "x"] and cluster.facts[1].new
    assert cluster.similar == ((1, 2, 0.8),)


def test_numbering_reads_each_clusters_own_edges_and_pairs_in_their_order() -> None:
    rows = {
        f: {"id": f, "ns": "ns", "text": f, "status": "active", "recorded_at": T0}
        for f in ("a", "b", "c", "d")
    }
    edges = [
        {"type": "REFERENCES", "source": "b", "target": "a", "open": True},
        {"type": "SUPERSEDES", "source": "c", "target": "d", "open": True},
        {"type": "CONTRADICTS", "source": "a", "target": "b", "open": True},
        {"type": "REFERENCES", "source": "a", "target": "c", "open": True},
    ]
    pairs = [("a", "b", 0.9), ("c", "d", 0.8), ("b", "a", 0.9), ("a", "c", 0.7)]
    numbering = Numbering(rows, {"a"}, edges, pairs)
    whole = numbering.cluster(3, ["d", "c", "b", "a"])
    assert [(e.type, e.source, e.target) for e in whole.edges] == [
        ("REFERENCES", 2, 1),
        ("SUPERSEDES", 3, 4),
        ("CONTRADICTS", 1, 2),
        ("REFERENCES", 1, 3),
    ]
    assert whole.similar == ((1, 2, 0.9), (1, 3, 0.7), (3, 4, 0.8))
    ab = numbering.cluster(1, ["a", "b"])
    assert [(e.type, e.source, e.target) for e in ab.edges] == [
        ("REFERENCES", 2, 1),
        ("CONTRADICTS", 1, 2),
    ]
    assert ab.similar == ((1, 2, 0.9),)


def test_numbering_reads_times_given_as_seconds_and_nanoseconds() -> None:
    seconds = int(T0.timestamp())
    rows: dict[str, dict[str, Any]] = {
        "x": {
            "id": "x",
            "ns": "ns",
            "text": "x",
            "status": "active",
            "recorded_at": [seconds, 123_456_789],
            "valid_from": None,
        },
        "y": {
            "id": "y",
            "ns": "ns",
            "text": "y",
            "status": "active",
            "recorded_at": T0,
            "valid_to": [seconds + 1, 999],
        },
    }
    cluster = Numbering(rows, {"x"}, [], []).cluster(1, ["x", "y"])
    y, x = cluster.facts  # y at T0 exactly, x 0.123456789 s later
    assert x.recorded_at == T0 + timedelta(microseconds=123_456) and x.valid_from is None
    assert y.valid_to == T0 + timedelta(seconds=1) and y.valid_to.tzinfo == UTC


def test_clusters_sharing_a_neighbour_are_rewritten_by_later_statements() -> None:
    involved = {1: ["a", "b"], 2: ["c"], 3: ["d", "e"], 4: ["f"], 5: ["g"]}
    near = {"a": ["x"], "c": ["y"], "d": ["x"], "f": ["g"]}
    # 3 shares x with 1: a new run of statements; 5 is f's neighbour, 4's.
    assert independent(involved, near) == [[1, 2], [3, 4], [5]]
    assert independent({1: ["a"], 2: ["b"]}, {}) == [[1, 2]]


def test_the_heuristic_merges_duplicates_and_lists_other_values_for_review() -> None:
    cluster = _cluster(
        [
            "The user works at Google.",
            "the user works at google",
            "The user works at Microsoft.",
            "The user does not drink coffee.",
            "The user drinks coffee.",
        ],
        similar=[(1, 3, 0.63), (2, 3, 0.63), (4, 5, 0.96)],
    )
    proposal = HeuristicProposer().propose(cluster)
    assert proposal.operations is not None
    assert proposal.operations == [
        {"op": "MERGE", "facts": [1, 2], "reason": proposal.operations[0]["reason"]}
    ]
    # The negated pair is not merged, for all its similarity: it is one more to review.
    assert [r.texts for r in proposal.review] == [
        ("The user works at Google.", "The user works at Microsoft."),
        ("The user does not drink coffee.", "The user drinks coffee."),
    ]
    assert not any(op["op"] in ("SUPERSEDE", "CONTRADICT") for op in proposal.operations)


def test_normalising_ignores_case_punctuation_and_spacing() -> None:
    assert normalised("  The USER's  dog, Rex! ") == normalised("the users dog rex")


def test_the_gate_says_why_a_run_does_not_start() -> None:
    config = ConsolidationConfig(min_interval=60, min_new_facts=5)
    row: dict[str, Any] = {
        "lock_run": None,
        "lock_expires_at": None,
        "watermark": None,
        "last_finished_at": T0,
        "now": T0 + timedelta(seconds=10),
        "new_facts": 9,
        "recent": [],
        "failures": [],
    }
    assert "min interval 60 s" in (Gate(row).refusal(config, force=False) or "")
    assert Gate(row).refusal(config, force=True) is None
    later = {**row, "now": T0 + timedelta(minutes=5), "new_facts": 2}
    assert "fewer than 5" in (Gate(later).refusal(config, force=False) or "")
    locked = {**row, "lock_run": "r1", "lock_expires_at": T0 + timedelta(minutes=1)}
    assert Gate(locked).busy()
    assert not Gate({**locked, "now": T0 + timedelta(minutes=2)}).busy()


def test_the_watermark_stays_before_a_cut_group_and_settling_facts() -> None:
    from graphmem.core.consolidate.progress import Outcome

    outcome = Outcome()
    outcome.new = [("a", T0), ("b", T0 + timedelta(seconds=1)), ("c", T0 + timedelta(minutes=5))]
    outcome.handled = {"a", "b", "c"}
    assert outcome.watermark_for(set()) == T0 + timedelta(minutes=5)
    outcome.blocked = {"c"}  # the limit cut the last group
    assert outcome.watermark_for(set()) == T0 + timedelta(seconds=1)
    outcome.blocked = set()
    outcome.cap = T0 + timedelta(minutes=1)  # c may still have company on its way
    assert outcome.watermark_for(set()) == T0 + timedelta(seconds=1)
    outcome.handled = {"b"}
    assert outcome.watermark_for(set()) is None
    assert outcome.watermark_for({"a"}) == T0 + timedelta(seconds=1)


def test_the_heuristic_reviews_a_swapped_word_instead_of_merging_it() -> None:
    go = "The user's favourite language for backend services at work is Go."
    rust = "The user's favourite language for backend services at work is Rust."
    cluster = _cluster([go, rust], similar=[(1, 2, 0.97)])
    proposal = HeuristicProposer().propose(cluster)
    assert proposal.operations == []
    assert [r.texts for r in proposal.review] == [(go, rust)]
    assert normalised("The user knows C++.") != normalised("The user knows C.")
    assert normalised("It is -5 °C.") != normalised("It is 5 °C.")
