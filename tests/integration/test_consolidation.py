"""Consolidation on the real Neo4j, with graphiti-core's real OpenAI-compatible client
against a local stub server that replays scripted answers; the heuristic proposer; undo;
the gate; and the agent's own contradict, resolve and retract."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pytest

from graphmem.client.graph import Graph
from graphmem.core.consolidate.heuristic import HeuristicProposer
from graphmem.errors import (
    ConsolidationBusyError,
    InvalidInputError,
    LLMConfigurationError,
    LLMRefusedError,
    LLMUnavailableError,
    UndoRefusedError,
)
from graphmem.settings import GraphmemSettings
from graphmem.testing.llm_stub import StubLLMServer, prompt_of, replay
from tests.helpers import free_port


@pytest.fixture(autouse=True)
def _leave_no_trace(graph: Graph, ns: str) -> Iterator[None]:
    """These tests write many near-identical facts (into namespaces named after ``ns``); they
    are removed afterwards, so that tests that search the whole vector index after them find
    their own facts among the nearest neighbours."""
    yield
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $ns DETACH DELETE n",
        ns=ns,
        database_=graph.database,
    )


_LISTED = re.compile(r"^\[(\d+)\] (['\"])(.*)\2 \(", re.MULTILINE)


def numbers_in(body: dict[str, Any]) -> dict[str, int]:
    """The cluster's facts as the proposer was shown them: text to number."""
    return {m.group(3): int(m.group(1)) for m in _LISTED.finditer(prompt_of(body))}


def scripted(rules: Iterable[tuple[str, tuple[str, ...], str]]) -> Callable[[dict[str, Any]], Any]:
    """A proposer script: each rule (operation, fact texts in its order, reason) applies to
    the clusters that show all its texts."""
    rules = list(rules)

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        shown = numbers_in(body)
        ops = [
            {"op": op, "facts": [shown[t] for t in texts], "reason": reason}
            for op, texts, reason in rules
            if all(t in shown for t in texts)
        ]
        return {"reasoning": "scripted", "operations": ops}

    return respond


def llm_settings(settings: GraphmemSettings, stub: StubLLMServer, **more: Any) -> GraphmemSettings:
    return settings.model_copy(
        update={"llm": "openai-compatible:stub", "llm_base_url": stub.base_url, **more}
    )


def export(graph: Graph, ns: str) -> tuple[list[Any], list[Any]]:
    """The namespace's facts and episodes (all properties but the embedding) and every
    relationship between them, in a stable order."""
    nodes, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE (n:Fact OR n:Episode) AND n.ns = $ns "
        "RETURN labels(n) AS labels, properties(n) AS p ORDER BY n.id",
        ns=ns,
        database_=graph.database,
    )
    rels, _, _ = graph.driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE (a:Fact OR a:Episode) AND a.ns = $ns "
        "RETURN a.id AS a, type(r) AS t, b.id AS b, properties(r) AS p ORDER BY a, t, b",
        ns=ns,
        database_=graph.database,
    )
    facts = [
        (row["labels"], {k: v for k, v in row["p"].items() if k != "embedding"}) for row in nodes
    ]
    return facts, [(r["a"], r["t"], r["b"], r["p"]) for r in rels]


@pytest.mark.both_versions
def test_an_llm_update_is_a_supersession_with_both_facts_kept(
    client_factory: Callable[..., Any], test_settings: GraphmemSettings, ns: str
) -> None:
    google, microsoft = "The user works at Google.", "The user works at Microsoft."
    desk, sitting = "The user uses a standing desk.", "The user switched back to sitting."
    rules = [
        ("SUPERSEDE", (microsoft, google), "a change of employer"),
        ("SUPERSEDE", (sitting, desk), "the user went back to sitting"),
    ]
    with StubLLMServer(scripted(rules)) as stub:
        memory = client_factory("sync", settings=llm_settings(test_settings, stub), ns=ns)
        old = memory.remember(google)
        new = memory.remember(microsoft)
        standing = memory.remember(desk)
        sits = memory.remember(sitting)
        result = memory.consolidate(force=True)
    assert result.status == "finished" and result.proposer == "llm"
    assert result.model == "openai-compatible:stub"
    assert {(a.op, a.facts) for a in result.applied} == {
        ("SUPERSEDE", (new.id, old.id)),
        ("SUPERSEDE", (sits.id, standing.id)),
    }
    assert result.usage.calls == len(stub.requests) >= 1 and result.usage.prompt_tokens > 0
    history = memory.history(old.id)
    assert [f.id for f in history.facts] == [old.id, new.id]
    assert history.edges[0].actor == result.run_id and history.edges[0].reason
    assert memory.get(old.id).status == "superseded" and memory.get(new.id).status == "active"
    assert memory.get(standing.id).superseded_by == sits.id
    texts = [h.text for h in memory.recall("where does the user work?").hits]
    assert microsoft in texts and google not in texts
    (record,) = memory.consolidation_runs(ids=[result.run_id])
    assert record.status == "finished" and record.usage == result.usage
    assert record.plans and len(record.applied) == 2
    assert sum(p["usage"]["calls"] for p in record.plans) == result.usage.calls  # per call


@pytest.mark.both_versions
def test_true_duplicates_merge_with_their_provenance(
    client_factory: Callable[..., Any], test_settings: GraphmemSettings, ns: str
) -> None:
    said = {
        "m1": "I enjoy hiking.",
        "m2": "I love spending time outdoors.",
        "m3": "I'm allergic to shellfish.",
        "m4": "I can't eat prawns.",
    }
    facts = {
        "m1": "The user enjoys hiking.",
        "m2": "The user loves spending time outdoors.",
        "m3": "The user is allergic to shellfish.",
        "m4": "The user can't eat prawns.",
    }
    rules = [
        ("MERGE", (facts["m1"], facts["m2"]), "both say the user likes being outdoors"),
        ("MERGE", (facts["m3"], facts["m4"]), "prawns are shellfish"),
    ]

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        text = prompt_of(body)
        if "Messages:" in text:
            shown = re.findall(r"^\[(\d+)\] \S+ \S+: (.*)$", text, re.MULTILINE)
            by_content = {content: int(n) for n, content in shown}
            return {
                "reasoning": "one fact per message",
                "facts": [
                    {"text": facts[m], "messages": [by_content[c]]}
                    for m, c in said.items()
                    if c in by_content
                ],
            }
        answer: dict[str, Any] = scripted(rules)(body)
        return answer

    with StubLLMServer(respond) as stub:
        memory = client_factory("sync", settings=llm_settings(test_settings, stub), ns=ns)
        messages = [
            {"content": c, "external_id": m, "occurred_at": "2026-02-01T10:00:00Z"}
            for m, c in said.items()
        ]
        ingested = memory.ingest(messages, extract=True)
        assert len(ingested.facts) == 4
        result = memory.consolidate(force=True)
    merges = {a.facts for a in result.applied if a.op == "MERGE"}
    by_text = {f.text: f.id for f in ingested.facts}
    assert merges == {
        (by_text[facts["m1"]], by_text[facts["m2"]]),
        (by_text[facts["m3"]], by_text[facts["m4"]]),
    }
    episodes = {e.external_id: e.id for e in ingested.episodes}
    for survivor, duplicate, pair in (("m1", "m2", ("m1", "m2")), ("m3", "m4", ("m3", "m4"))):
        dup = memory.get(by_text[facts[duplicate]])
        assert dup.status == "merged" and dup.superseded_by == by_text[facts[survivor]]
        hit = next(
            h
            for h in memory.recall(facts[survivor], kinds=["fact"]).hits
            if h.id == by_text[facts[survivor]]
        )
        assert set(hit.provenance.external_ids) == set(pair)
        assert set(hit.provenance.episode_ids) == {episodes[m] for m in pair}


def test_an_unsettled_conflict_is_a_contradiction_a_later_resolve_settles(
    client_factory: Callable[..., Any], test_settings: GraphmemSettings, ns: str
) -> None:
    vegan, steak = "The user is vegan.", "The user had steak for dinner yesterday."
    rules = [("CONTRADICT", (vegan, steak), "a vegan does not eat steak")]
    with StubLLMServer(scripted(rules)) as stub:
        memory = client_factory("sync", settings=llm_settings(test_settings, stub), ns=ns)
        a = memory.remember(vegan)
        b = memory.remember(steak)
        result = memory.consolidate(force=True)
    assert [(x.op, x.facts) for x in result.applied] == [("CONTRADICT", (a.id, b.id))]
    (hit,) = [h for h in memory.recall("is the user vegan?").hits if h.id == a.id]
    assert hit.fact is not None and [c.id for c in hit.fact.contradictions] == [b.id]
    assert hit.fact.contradictions[0].actor == result.run_id
    block = memory.context("what does the user eat?", budget_tokens=400)
    assert "contradicted by" in block.text
    assert memory.stats().contradictions_open == 1
    kept, lost = memory.resolve(a.id, b.id, keep=b.id, reason="the user eats meat again")
    assert kept.id == b.id and lost.status == "superseded" and lost.superseded_by == b.id
    assert memory.stats().contradictions_open == 0 and kept.contradictions == ()


def test_a_bad_plan_changes_nothing_it_should_not_and_records_every_rejection(
    client_factory: Callable[..., Any],
    test_settings: GraphmemSettings,
    graph: Graph,
    ns: str,
) -> None:
    texts = ["The user lives in Lisbon.", "The user lives in Porto.", "The user lives in Faro."]
    seen: dict[str, Any] = {}

    def bad(body: dict[str, Any]) -> dict[str, Any]:
        shown = numbers_in(body)
        lisbon, porto, faro = (shown[t] for t in texts)
        # While the proposer thinks, an agent retires Lisbon: the plan's RETRACT of it is
        # refused when the transaction validates the plan again.
        memory.remember("The user lives in Coimbra.", supersedes=[facts[0].id])
        seen["before"] = export(graph, ns)
        return {
            "reasoning": "a plan with mistakes",
            "operations": [
                {"op": "MERGE", "facts": [porto, 42], "reason": "unknown number"},
                {"op": "SUPERSEDE", "facts": [porto, faro], "reason": "cycle, half one"},
                {"op": "SUPERSEDE", "facts": [faro, porto], "reason": "cycle, half two"},
                {"op": "RETRACT", "facts": [lisbon], "reason": "retired meanwhile"},
                {"op": "EXPLODE", "facts": [lisbon], "reason": "not an operation"},
            ],
        }

    with StubLLMServer(bad) as stub:
        memory = client_factory("sync", settings=llm_settings(test_settings, stub), ns=ns)
        facts = [memory.remember(t) for t in texts]
        result = memory.consolidate(force=True)
    assert result.applied == ()
    whys = sorted(r.rejection for r in result.rejected)
    assert len(whys) == 5
    assert any("unknown fact number 42" in w for w in whys)
    assert sum("cycle" in w for w in whys) == 2
    assert any("retired (superseded)" in w for w in whys)
    assert any("malformed" in w for w in whys)
    assert export(graph, ns) == seen["before"]
    assert memory.consolidation_runs()[0].rejected == result.rejected

    with StubLLMServer(replay(["this is not JSON {"] * 3)) as stub:
        memory = client_factory("sync", settings=llm_settings(test_settings, stub), ns=ns)
        memory.remember("The user lives in Porto.")  # a new fact to weigh
        before = export(graph, ns)
        result = memory.consolidate(force=True)
    assert result.status == "partial" and result.applied == ()
    assert "unusable" in result.rejected[0].rejection and "JSON" in result.rejected[0].rejection
    assert len(stub.requests) == 3  # the first answer and two retries
    assert export(graph, ns) == before
    (record,) = memory.consolidation_runs(limit=1)
    assert record.status == "partial" and record.rejected == result.rejected


def test_undo_restores_the_graph_exactly_and_refuses_what_a_later_write_built_on(
    client_factory: Callable[..., Any],
    test_settings: GraphmemSettings,
    graph: Graph,
    ns: str,
) -> None:
    a, b, c, d = (
        "The user's sister is called Ana.",
        "The user has a sister named Ana.",
        "The user works remotely.",
        "The user works from the office every day.",
    )
    rules = [
        ("MERGE", (a, b), "the same sister"),
        ("CONTRADICT", (c, d), "remote or in the office"),
    ]
    with StubLLMServer(scripted(rules)) as stub:
        settings = llm_settings(test_settings, stub)
        for space in (ns, f"{ns}-later"):
            memory = client_factory("sync", settings=settings, ns=space)
            fa = memory.remember(a, pinned=True)
            memory.remember(b, references=[fa.id])
            fc, fd = memory.remember(c), memory.remember(d)
            before = export(graph, space)
            run = memory.consolidate(force=True)
            assert len(run.applied) == 2 and export(graph, space) != before
            if space == ns:
                undone = memory.undo(run.run_id)
                assert undone.restored_facts == 4 and undone.removed_edges == 2
                assert export(graph, space) == before
                with pytest.raises(UndoRefusedError, match="undone already"):
                    memory.undo(run.run_id)
            else:
                memory.resolve(fc.id, fd.id, keep=fd.id, reason="back at the office")
                with pytest.raises(UndoRefusedError, match="resolved since") as refused:
                    memory.undo(run.run_id)
                assert any(fc.id in why for why in refused.value.blockers)
                assert memory.consolidation_runs(ids=[run.run_id])[0].status == "finished"


@pytest.mark.both_versions
def test_the_heuristic_merges_exact_duplicates_supersedes_nothing_and_lists_pairs_for_review(
    memory: Any, graph: Graph, ns: str
) -> None:
    first = memory.remember("The user works at Google.")
    second = memory.remember("the user works at google")
    other = memory.remember("The user works at Microsoft.")
    preview = memory.consolidate(force=True, dry_run=True)
    assert preview.status == "dry_run" and preview.run_id is None
    assert memory.get(second.id).status == "active"  # a dry run writes nothing
    result = memory.consolidate(force=True)
    assert result.proposer == "heuristic"
    assert [(a.op, a.facts) for a in result.applied] == [("MERGE", (first.id, second.id))]
    assert [a.op for a in preview.applied] == ["MERGE"]
    assert [set(r.facts) for r in result.review] == [{first.id, other.id}]
    assert memory.get(other.id).status == "active"
    assert memory.stats().supersedes == 0
    assert memory.consolidation_runs(limit=1)[0].review == result.review
    # The watermark moved past them: nothing new, nothing done.
    assert memory.consolidate(force=True).new_facts == 0


def test_the_gate_waits_for_new_facts_and_the_interval(
    client_factory: Callable[..., Any], test_settings: GraphmemSettings, ns: str
) -> None:
    settings = test_settings.model_copy(
        update={"consolidate_min_new_facts": 3, "consolidate_min_interval": 3600.0}
    )
    memory = client_factory("sync", settings=settings, ns=ns)
    memory.remember("The user has a cat.")
    skipped = memory.consolidate()
    assert skipped.status == "skipped" and "fewer than 3" in (skipped.reason or "")
    memory.remember_many(["The user has a dog.", "The user has a parrot."])
    assert memory.consolidate().status == "finished"
    memory.remember_many([f"The user has fish number {i}." for i in range(3)])
    later = memory.consolidate()
    assert later.status == "skipped" and "min interval" in (later.reason or "")
    assert memory.consolidate(force=True).status == "finished"


def test_two_consolidations_at_once_one_runs_the_other_is_told_why_not(
    client_factory: Callable[..., Any], ns: str
) -> None:
    entered, release = threading.Event(), threading.Event()

    class Slow(HeuristicProposer):
        def propose(self, cluster: Any) -> Any:
            entered.set()
            release.wait(30)
            return super().propose(cluster)

    first = client_factory("sync", ns=ns, proposer=Slow())
    second = client_factory("sync", ns=ns)
    first.remember_many(["The user likes tea.", "The user likes tea."])
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(r=first.consolidate(force=True)))
    worker.start()
    assert entered.wait(30)
    with pytest.raises(ConsolidationBusyError, match="holds namespace") as busy:
        second.consolidate(force=True)
    release.set()
    worker.join(30)
    assert busy.value.run_id == outcome["r"].run_id and outcome["r"].status == "finished"
    assert second.consolidate(force=True).status == "finished"  # the lock was released


def test_extraction_through_the_llm_links_facts_and_runs_once_per_message(
    client_factory: Callable[..., Any], test_settings: GraphmemSettings, ns: str
) -> None:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        count = len(re.findall(r"^\[\d+\]", prompt_of(body), re.MULTILINE))
        return {
            "reasoning": "one per message",
            "facts": [
                {"text": f"The user said thing {n}.", "messages": [n], "valid_from": None}
                for n in range(1, count + 1)
            ]
            + [{"text": "A fact from no message shown.", "messages": [99]}],
        }

    with StubLLMServer(respond) as stub:
        memory = client_factory("sync", settings=llm_settings(test_settings, stub), ns=ns)
        plain = memory.ingest(
            [
                {
                    "content": "First message.",
                    "external_id": "a",
                    "occurred_at": "2026-03-02T09:00:00Z",
                }
            ]
        )
        assert plain.facts == ()  # no extraction unless asked for
        messages = [
            {
                "content": "First message.",
                "external_id": "a",
                "occurred_at": "2026-03-02T09:00:00Z",
            },
            {
                "content": "Second message.",
                "external_id": "b",
                "occurred_at": "2026-03-03T09:00:00Z",
            },
        ]
        first = memory.ingest(messages, extract=True)
        assert len(first.facts) == 2 and len(stub.requests) == 2  # stored + new, one call each
        again = memory.ingest(messages, extract=True)
        assert again.facts == () and len(stub.requests) == 2
    for fact in first.facts:
        hit = next(h for h in memory.recall(fact.text, kinds=["fact"]).hits if h.id == fact.id)
        assert len(hit.provenance.episode_ids) == 1
        assert fact.valid_from is not None and fact.valid_from.month == 3


def test_llm_failures_are_typed_errors_that_write_nothing(
    client_factory: Callable[..., Any],
    test_settings: GraphmemSettings,
    graph: Graph,
    ns: str,
) -> None:
    memory = client_factory("sync", ns=ns)
    memory.remember_many(["The user likes jazz.", "The user likes jazz music."])
    before = export(graph, ns)
    dead = test_settings.model_copy(
        update={
            "llm": "openai-compatible:stub",
            "llm_base_url": f"http://127.0.0.1:{free_port()}/v1",
            "llm_retries": 0,
        }
    )
    with pytest.raises(LLMUnavailableError, match="cannot reach") as unreachable:
        client_factory("sync", settings=dead, ns=ns).consolidate(force=True)
    assert unreachable.value.provider == "openai-compatible"
    no_key = test_settings.model_copy(update={"llm": "openai:gpt-4.1-mini", "llm_api_key": None})
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("OPENAI_API_KEY", raising=False)
        with pytest.raises(LLMConfigurationError, match="GRAPHMEM_LLM_API_KEY"):
            client_factory("sync", settings=no_key, ns=ns).consolidate(force=True)
        with pytest.raises(LLMConfigurationError):
            client_factory("sync", settings=no_key, ns=ns).ingest(["Hello."], extract=True)
    with StubLLMServer(replay([(401, "bad key")])) as stub:
        refused = client_factory("sync", settings=llm_settings(test_settings, stub), ns=ns)
        with pytest.raises(LLMRefusedError, match="refused the API key"):
            refused.consolidate(force=True)
    assert export(graph, ns) == before
    assert [r.status for r in memory.consolidation_runs()] == ["failed", "failed"]


def test_agent_operations_contradict_resolve_and_retract(memory: Any, ns: str) -> None:
    a = memory.remember("The meeting is on Monday.")
    b = memory.remember("The meeting is on Tuesday.", contradicts=[a.id], reason="two dates")
    assert [c.id for c in b.contradictions] == [a.id] and b.contradictions[0].reason == "two dates"
    with pytest.raises(InvalidInputError, match="already have an open contradiction"):
        memory.contradict(a.id, b.id)
    with pytest.raises(InvalidInputError, match="keep must be one of"):
        memory.resolve(a.id, b.id, keep="someone-else")
    c = memory.remember("The meeting room is 4B.")
    with pytest.raises(InvalidInputError, match="no open contradiction"):
        memory.resolve(a.id, c.id, keep=a.id)
    _, lost = memory.resolve(a.id, b.id, keep=b.id, reason="moved to Tuesday")
    assert lost.id == a.id and lost.status == "superseded"
    before = time.time()
    time.sleep(0.05)
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(before, UTC)
    gone = memory.retract(c.id, reason="there is no room 4B")
    assert gone.status == "retracted" and gone.retraction_reason == "there is no room 4B"
    assert c.id not in [h.id for h in memory.recall("meeting room").hits]
    assert c.id in [h.id for h in memory.recall("meeting room", as_of=moment).hits]
    with pytest.raises(InvalidInputError):
        memory.retract(c.id)


_GROUPS = (
    "The user likes green tea in the morning.",
    "The user's car is a red Volvo from 2011.",
    "The user plays the cello every Sunday.",
)


def _merged_groups(graph: Graph, ns: str) -> list[int]:
    """For each group of two duplicates: how many of its facts were merged (0 or 1 when
    whole), after checking that each merge came whole: the MERGED_INTO edge, and the
    :ConsolidationChange nodes of both facts with their state after the run."""
    rows, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns}) "
        "OPTIONAL MATCH (f)-[m:MERGED_INTO]->() "
        "OPTIONAL MATCH (c:ConsolidationChange {ns: $ns, fact_id: f.id}) "
        "RETURN f.text AS text, f.status AS status, count(DISTINCT m) AS edges, "
        "collect(c.after_status) AS after, count(c) AS changes",
        ns=ns,
        database_=graph.database,
    )
    counts = []
    for text in _GROUPS:
        pair = [r for r in rows if r["text"] == text]
        merged = sum(r["status"] == "merged" for r in pair)
        assert merged in (0, 1), pair
        assert sum(r["edges"] for r in pair) == merged, pair
        for r in pair:  # both facts' changes recorded in full, or neither
            assert r["changes"] == merged and len(r["after"]) == merged, pair
        counts.append(merged)
    return counts


def test_a_run_killed_at_any_step_leaves_whole_clusters_and_the_next_run_finishes(
    client_factory: Callable[..., Any],
    graph: Graph,
    embedder: Any,
    ns: str,
) -> None:
    import os
    import subprocess
    import sys

    from tests.helpers import cli_env

    vectors = embedder.embed(_GROUPS)
    child = os.path.join(os.path.dirname(__file__), "consolidate_child.py")

    def setup(space: str) -> Any:
        memory = client_factory("sync", ns=space)
        texts = [t for t in _GROUPS for _ in range(2)]
        memory.remember_many(texts, vectors=[vectors[i // 2] for i in range(len(texts))])
        return memory

    def run_child(space: str, kill_at: int) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            **cli_env(graph, space),
            "KILL_AT": str(kill_at),
            "KILL_DIMENSION": str(embedder.dimension),
            "KILL_MODEL_ID": embedder.model_id,
            "GRAPHMEM_CONSOLIDATE_LOCK_TTL": "1",
            "PYTHONPATH": os.pathsep.join(sys.path),
        }
        return subprocess.run(
            [sys.executable, child], env=env, capture_output=True, text=True, timeout=120
        )

    setup(f"{ns}-whole")
    whole = run_child(f"{ns}-whole", 10**6)
    assert whole.returncode == 0, whole.stderr
    statements = json.loads(whole.stdout)["statements"]
    assert json.loads(whole.stdout)["applied"] == 3
    assert _merged_groups(graph, f"{ns}-whole") == [1, 1, 1]
    for kill_at in range(1, statements + 1):
        space = f"{ns}-k{kill_at}"
        memory = setup(space)
        killed = run_child(space, kill_at)
        assert killed.returncode == -9, (kill_at, killed.stdout, killed.stderr)
        _merged_groups(graph, space)  # whole clusters only
        time.sleep(1.1)  # the dead run's lock lapses
        result = memory.consolidate(force=True)
        assert result.status == "finished", (kill_at, result)
        assert _merged_groups(graph, space) == [1, 1, 1], kill_at


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_background_consolidation_respects_the_gate_and_stops_with_the_client(
    client_factory: Callable[..., Any], test_settings: GraphmemSettings, ns: str, kind: str
) -> None:
    settings = test_settings.model_copy(
        update={"consolidate_min_new_facts": 2, "consolidate_min_interval": 0.0}
    )
    memory = client_factory(kind, settings=settings, ns=ns, consolidate_every=0.2)
    memory.remember("The user collects stamps.")
    time.sleep(0.6)
    assert memory.consolidation_runs() == []  # one new fact: the gate says no
    memory.remember("the user collects stamps")
    deadline = time.monotonic() + 20

    def finished() -> list[Any]:
        return [r for r in memory.consolidation_runs() if r.status == "finished"]

    while time.monotonic() < deadline and not finished():
        if memory.loop is not None:  # the async client's task runs while its loop does
            memory.loop.run_until_complete(asyncio.sleep(0.2))
        else:
            time.sleep(0.2)
    runs = finished()
    assert runs and runs[-1].applied[0].op == "MERGE"
    memory.close()
    assert memory.raw._background is None


def test_a_batch_cut_by_the_run_limit_is_finished_by_the_next_run(
    client_factory: Callable[..., Any], ns: str
) -> None:
    from graphmem.core.consolidate.config import ConsolidationConfig

    memory = client_factory("sync", ns=ns)
    memory.raw._core.consolidation = ConsolidationConfig(max_new_facts=3, min_new_facts=1)
    texts = [
        "The user likes kiwis.",
        "The office is in Porto.",
        "The cat is called Miso.",
        "Quarterly taxes are due in April.",
        "The user's bike is blue.",
    ]
    memory.remember_many(texts)  # one batch: one recording time
    first = memory.consolidate(force=True)
    assert first.new_facts == 3 and first.watermark is None  # the group was cut
    second = memory.consolidate(force=True)
    assert second.new_facts == 2  # the rest of the group; the handled ones are not read again
    assert memory.consolidate(force=True).new_facts == 0


def test_a_cluster_whose_proposals_stay_unusable_is_given_up_after_its_tries(
    client_factory: Callable[..., Any], test_settings: GraphmemSettings, ns: str
) -> None:
    with StubLLMServer(lambda _: "never JSON") as stub:
        settings = llm_settings(test_settings, stub, llm_retries=0)
        memory = client_factory("sync", settings=settings, ns=ns)
        memory.remember_many(["The user owns a kayak.", "The user owns a red kayak."])
        runs = [memory.consolidate(force=True) for _ in range(4)]
    assert [r.status for r in runs[:3]] == ["partial"] * 3
    assert runs[3].status == "finished" and runs[3].new_facts == 0
    assert sum("given up" in r.rejection for r in runs[3].rejected) == 2
    assert len(stub.requests) == 3
    record = memory.consolidation_runs(limit=1)[0]
    assert any("given up" in r.rejection for r in record.rejected)


@pytest.mark.both_versions
def test_a_duplicate_is_found_while_a_thousand_other_namespaces_hold_the_same_text(
    memory: Any, graph: Graph, embedder: Any, ns: str
) -> None:
    first_text = "The user keeps a spare key under the blue flowerpot."
    second_text = "The user keeps a spare key under the blue flowerpot outside."
    (vector,) = np.asarray(embedder.embed((first_text,)), dtype=float)
    near = vector + np.random.default_rng(3).normal(0, 0.008, size=vector.shape)
    near /= np.linalg.norm(near)
    assert 0.97 < float(near @ vector) < 0.995
    first, second = memory.remember_many([first_text, second_text], vectors=[vector, near])
    # A thousand other namespaces (named after this one, so the fixture removes them) hold
    # both texts with the vector halfway between the two: in the whole index, 2,000 facts are
    # nearer to each of this namespace's two than they are to each other.
    middle = (vector + near) / np.linalg.norm(vector + near)
    graph.driver.execute_query(
        "UNWIND range(1, 1000) AS i UNWIND $texts AS text "
        "CREATE (:Fact {id: randomUUID(), ns: $ns + '-other-' + i, text: text, "
        "embedding: $vector, status: 'active', recorded_at: datetime(), text_hash: text})",
        ns=ns,
        texts=[first_text, second_text],
        vector=[float(x) for x in middle],
        database_=graph.database,
    )
    result = memory.consolidate(force=True)
    merged = [(a.op, set(a.facts)) for a in result.applied]
    if graph.schema.filtered_search:
        # The index filters by namespace: the namespace's own near neighbour is found.
        assert merged == [("MERGE", {first.id, second.id})]
    else:
        # Neo4j 5.26: the neighbours come from the whole index, and the other namespaces'
        # copies crowd this one's out (exact duplicates are still found by their text hash).
        assert merged == []
        assert memory.get(second.id).status == "active"
