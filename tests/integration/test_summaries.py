"""Summaries on the real Neo4j, written by graphiti-core's real OpenAI-compatible client
against the local stub server: a coherent cluster of related facts recorded close in time is
summarised into one fact linked to its members (which stay believed), recall shows the members
as its provenance, a tight context prefers it, and undo retracts it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from graphmem.client.graph import Graph
from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.consolidate.summaries import summary_clusters
from graphmem.errors import InvalidInputError
from graphmem.settings import GraphmemSettings
from graphmem.testing.llm_stub import StubLLMServer, prompt_of
from tests.integration.conftest import Client

TRIP = [
    "The user is planning a trip to Japan in April",
    "The user booked flights to Tokyo for the Japan trip in April",
    "The user wants to see the cherry blossoms in Kyoto on the Japan trip",
    "The user reserved a ryokan in Kyoto for the April trip to Japan",
]
OTHER = "The user's cat is called Miso"
SUMMARY = (
    "The user is planning an April trip to Japan: flights to Tokyo are booked, a ryokan in "
    "Kyoto is reserved, and they want to see the cherry blossoms."
)
_LISTED = re.compile(r"^\[(\d+)\] (['\"])(.*)\2 \(", re.MULTILINE)


def summarizer(calls: list[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Summarises every fact of a summary request (the trip's); keeps every other cluster."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        prompt = prompt_of(body)
        if "Write ONE summary fact" not in prompt:
            return {"reasoning": "nothing to change", "operations": []}
        shown = {m.group(3): int(m.group(1)) for m in _LISTED.finditer(prompt)}
        calls.append(prompt)
        return {
            "reasoning": "all four are about the April trip to Japan",
            "summary": SUMMARY,
            "facts": [n for t, n in shown.items() if t in TRIP],
        }

    return respond


@pytest.fixture
def llm_memory(
    client_factory: Any, test_settings: GraphmemSettings, ns: str
) -> Iterator[tuple[Client, list[str]]]:
    calls: list[str] = []
    with StubLLMServer(summarizer(calls)) as stub:
        settings = test_settings.model_copy(
            update={
                "llm": "openai-compatible:stub",
                "llm_base_url": stub.base_url,
                "consolidate_summaries": True,
            }
        )
        yield client_factory("sync", settings=settings, ns=ns), calls


def test_density_clusters_need_meaning_time_and_coherence() -> None:
    config = ConsolidationConfig()
    a, b = np.eye(4)[0], np.eye(4)[1]
    vectors = np.array([a, a, a, b, b])
    day = 86_400.0
    assert summary_clusters([0, day, 2 * day, 0, day], vectors, config) == [[0, 1, 2]]
    # The same meaning, too far apart in time: no cluster.
    assert summary_clusters([0, 30 * day, 60 * day, 0, 0], vectors, config) == []
    # A loose cluster below the coherence threshold is left alone.
    loose = ConsolidationConfig(summary_similarity=0.0, summary_coherence=0.9)
    mixed = np.array([a, (a + b) / np.sqrt(2), b, b, a])
    assert summary_clusters([0] * 5, mixed, loose) == []


def test_a_summary_links_its_members_and_undo_retracts_it(
    llm_memory: tuple[Client, list[str]], graph: Graph, ns: str
) -> None:
    memory, calls = llm_memory
    members = [memory.remember(text).id for text in TRIP]
    cat = memory.remember(OTHER).id
    dry = memory.consolidate(force=True, dry_run=True, tiers=False)
    assert [a.op for a in dry.applied] == ["SUMMARIZE"] and dry.applied[0].summary_id is None
    result = memory.consolidate(force=True, tiers=False)
    (op,) = [a for a in result.applied if a.op == "SUMMARIZE"]
    assert set(op.facts) == set(members) and cat not in op.facts and len(calls) == 2
    summary = memory.get(op.summary_id)
    assert summary.text == SUMMARY and summary.source == "consolidation:summary"
    assert set(summary.summarizes) == set(members)
    assert all(memory.get(m).status == "active" for m in members)  # members stay believed
    edges, _, _ = graph.driver.execute_query(
        "MATCH (s:Fact {id: $id})-[r:SUMMARIZES]->(m) RETURN m.id AS m, r.actor AS actor",
        id=op.summary_id,
        database_=graph.database,
    )
    assert {e["m"] for e in edges} == set(members)
    assert {e["actor"] for e in edges} == {result.run_id}
    # Recall returns the summary with its members as provenance.
    hits = memory.recall("what are the user's travel plans for Japan?").hits
    (found,) = [h for h in hits if h.id == op.summary_id]
    assert found.fact is not None and set(found.fact.summarizes) == set(members)
    # A tight budget prefers the summary over its members; a roomy one shows them all.
    tight = memory.context("the user's trip to Japan", budget_tokens=90)
    assert op.summary_id in tight.fact_ids and not set(members) & set(tight.fact_ids)
    roomy = memory.context("the user's trip to Japan", budget_tokens=2000)
    assert set(members) <= set(roomy.fact_ids)
    # A second run does not summarise the members again.
    again = memory.consolidate(force=True, tiers=False)
    assert not [a for a in again.applied if a.op == "SUMMARIZE"]
    undone = memory.undo(result.run_id)
    assert undone.withdrawn_summaries == 1
    gone = memory.get(op.summary_id)
    assert gone.status == "retracted" and gone.summarizes == ()
    assert op.summary_id not in [h.id for h in memory.recall("trip to Japan").hits]
    timeline = memory.audit.timeline(op.summary_id)
    assert [e.kind for e in timeline.events][-1] == "retracted"


def test_summaries_need_a_proposer_that_can_write_them(memory: Client) -> None:
    with pytest.raises(InvalidInputError, match="cannot summarise"):
        memory.consolidate(force=True, summaries=True)
    for text in TRIP:
        memory.remember(text)
    result = memory.consolidate(force=True)  # the heuristic: no summaries, no error
    assert not [a for a in result.applied if a.op == "SUMMARIZE"]


def test_summaries_are_off_unless_asked_for(
    client_factory: Any, test_settings: GraphmemSettings, ns: str
) -> None:
    calls: list[str] = []
    with StubLLMServer(summarizer(calls)) as stub:
        settings = test_settings.model_copy(
            update={"llm": "openai-compatible:stub", "llm_base_url": stub.base_url}
        )
        memory = client_factory("sync", settings=settings, ns=ns)
        for text in TRIP:
            memory.remember(text)
        plain = memory.consolidate(force=True, dry_run=True)
        asked = memory.consolidate(force=True, dry_run=True, summaries=True)
    assert not [a for a in plain.applied if a.op == "SUMMARIZE"]
    assert [a.op for a in asked.applied if a.op == "SUMMARIZE"] == ["SUMMARIZE"]
