"""Importance scores and tiers on the real Neo4j: consolidation's tier pass promotes and
demotes at the thresholds, records each move in the timeline, and undo gives the tiers back;
context puts the hot tier first and leaves cold facts out; recall and audits still find them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem.client.graph import Graph
from graphmem.core.importance import ImportanceConfig, importance_score
from graphmem.settings import GraphmemSettings
from tests.integration.conftest import Client


def set_use(graph: Graph, ns: str, fact_id: str, *, idle_days: float, uses: int) -> None:
    """Gives a fact a use history: last used ``idle_days`` ago (and recorded before that),
    ``uses`` times."""
    graph.driver.execute_query(
        "MATCH (f:Fact {id: $id}) WHERE f.ns = $ns "
        "SET f.recorded_at = datetime() - duration({seconds: toInteger($idle * 86400) + 60}), "
        "f.last_accessed_at = CASE WHEN $uses > 0 "
        "  THEN datetime() - duration({seconds: toInteger($idle * 86400)}) END, "
        "f.access_count = $uses",
        id=fact_id,
        ns=ns,
        idle=idle_days,
        uses=uses,
        database_=graph.database,
    )


def tiers_of(graph: Graph, ns: str) -> dict[str, Any]:
    rows, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns}) RETURN f.text AS text, f.tier AS tier",
        ns=ns,
        database_=graph.database,
    )
    return {r["text"]: r["tier"] for r in rows}


@pytest.fixture
def tiered(memory: Client, graph: Graph, ns: str) -> dict[str, str]:
    """Four facts: used often and lately (hot), never used for a year (cold), said to matter
    and never used (warm: the floor holds it), and a fresh one (warm)."""
    texts = {
        "hot": "The user's daughter is called Maya",
        "cold": "The user once asked about train times to Porto",
        "important": "The user is allergic to penicillin",
        "fresh": "The user is reading a book about bees",
    }
    ids = {name: memory.remember(text).id for name, text in texts.items()}
    graph.driver.execute_query(
        "MATCH (f:Fact {id: $id}) SET f.importance = 0.7",
        id=ids["important"],
        database_=graph.database,
    )
    set_use(graph, ns, ids["hot"], idle_days=0.5, uses=12)
    set_use(graph, ns, ids["cold"], idle_days=365, uses=0)
    set_use(graph, ns, ids["important"], idle_days=365, uses=0)
    return ids


def test_the_score_follows_the_formula() -> None:
    config = ImportanceConfig()
    now = datetime(2026, 1, 1, tzinfo=UTC)
    fresh = importance_score(None, now, None, 0, now, config)
    assert fresh == pytest.approx(config.default)
    month = importance_score(None, now - timedelta(days=30), None, 0, now, config)
    assert month == pytest.approx(config.default / 2.718281828, rel=1e-4)
    # Use refreshes recency and reinforces: last used today, ten times.
    used = importance_score(None, now - timedelta(days=300), now, 10, now, config)
    assert used > fresh
    # What the caller said matters never fades below what it said.
    old = importance_score(0.9, now - timedelta(days=3650), None, 0, now, config)
    assert old == pytest.approx(0.81)


def test_the_tier_pass_promotes_and_demotes_at_the_thresholds(
    memory: Client, graph: Graph, ns: str, tiered: dict[str, str]
) -> None:
    result = memory.consolidate(force=True, tiers=True)
    moves = {a.facts[0]: a for a in result.applied if a.op in ("PROMOTE", "DEMOTE")}
    assert moves[tiered["hot"]].op == "PROMOTE" and moves[tiered["hot"]].tier == "hot"
    assert moves[tiered["cold"]].op == "DEMOTE" and moves[tiered["cold"]].tier == "cold"
    assert tiered["important"] not in moves and tiered["fresh"] not in moves
    assert memory.get(tiered["hot"]).tier == "hot"
    assert memory.get(tiered["cold"]).tier == "cold"
    assert memory.get(tiered["important"]).tier == "warm"
    # A second pass with nothing changed moves nothing.
    again = memory.consolidate(force=True, tiers=True)
    assert not [a for a in again.applied if a.op in ("PROMOTE", "DEMOTE")]
    # Used again, the cold fact comes back to warm at the next pass.
    set_use(graph, ns, tiered["cold"], idle_days=0, uses=1)
    back = memory.consolidate(force=True, tiers=True)
    (move,) = [a for a in back.applied if a.facts == (tiered["cold"],)]
    assert (move.op, move.before, move.tier) == ("PROMOTE", "cold", "warm")


def test_a_dry_run_moves_nothing(
    memory: Client, graph: Graph, ns: str, tiered: dict[str, str]
) -> None:
    before = tiers_of(graph, ns)
    result = memory.consolidate(force=True, dry_run=True, tiers=True)
    assert {a.op for a in result.applied} >= {"PROMOTE", "DEMOTE"}
    assert tiers_of(graph, ns) == before


def test_moves_are_in_the_timeline_and_undo_gives_the_tiers_back(
    memory: Client, graph: Graph, ns: str, tiered: dict[str, str]
) -> None:
    before = tiers_of(graph, ns)
    run = memory.consolidate(force=True, tiers=True)
    timeline = memory.audit.timeline(tiered["hot"])
    (event,) = [e for e in timeline.events if e.kind == "promoted"]
    assert event.actor == run.run_id and "hot" in event.words and event.reason
    undone = memory.undo(run.run_id)
    assert undone.restored_facts == 2
    assert tiers_of(graph, ns) == before
    assert memory.get(tiered["hot"]).tier == "warm"
    after = memory.audit.timeline(tiered["hot"])
    kinds = [e.kind for e in after.events]
    assert kinds[-2:] == ["promoted", "tier_restored"]


def test_the_hot_tier_is_capped(
    client_factory: Any, graph: Graph, ns: str, test_settings: GraphmemSettings
) -> None:
    capped = test_settings.model_copy(update={"tier_hot_max_facts": 2})
    memory = client_factory("sync", settings=capped, ns=ns)
    ids = [memory.remember(f"The user's favourite number {i} is {i * 7}").id for i in range(4)]
    for uses, fact_id in enumerate(ids):
        set_use(graph, ns, fact_id, idle_days=0.1, uses=20 + uses)
    result = memory.consolidate(force=True, tiers=True)
    hot = {a.facts[0] for a in result.applied if a.tier == "hot"}
    assert hot == set(ids[2:])  # the two most used
    assert all(a.reason for a in result.applied)


def test_context_puts_hot_first_and_leaves_cold_out(
    memory: Client, ns: str, tiered: dict[str, str]
) -> None:
    memory.consolidate(force=True, tiers=True)
    block = memory.context("train times to Porto", budget_tokens=400)
    assert block.fact_ids[0] == tiered["hot"]  # hot, though the question is not about it
    assert tiered["cold"] not in block.fact_ids
    warm = memory.context("train times to Porto", budget_tokens=400, include_cold=True)
    assert tiered["cold"] in warm.fact_ids
    # Recall and audits still find the cold fact.
    hits = memory.recall("train times to Porto").hits
    assert tiered["cold"] in [h.id for h in hits]
    assert next(h for h in hits if h.id == tiered["cold"]).fact.tier == "cold"
    beliefs = memory.audit.beliefs()
    assert tiered["cold"] in [f.id for f in beliefs.facts]


def test_the_tier_pass_is_off_unless_asked_for(
    client_factory: Any, graph: Graph, ns: str, test_settings: GraphmemSettings
) -> None:
    memory = client_factory("sync", ns=ns)
    fact = memory.remember("The user once asked about the weather in Oslo").id
    set_use(graph, ns, fact, idle_days=365, uses=0)
    assert not [a for a in memory.consolidate(force=True).applied if a.op == "DEMOTE"]
    on = test_settings.model_copy(update={"consolidate_tiers": True})
    tiering = client_factory("sync", settings=on, ns=ns)
    (move,) = tiering.consolidate(force=True).applied
    assert (move.op, move.tier) == ("DEMOTE", "cold")
