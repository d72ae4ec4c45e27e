"""forget on the real Neo4j: erasure through every read path, tombstones without content, no
resurrection, review flags, namespaces kept apart, dry runs and a forget killed mid-way."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.core.extraction import ExtractedFact
from graphmem.core.forget.verify import TOMBSTONE_PROPERTIES
from graphmem.embed.embedder import Embedder
from graphmem.errors import ForgottenContentError, ForgottenError, InvalidInputError, NotFoundError
from graphmem.models import Episode
from graphmem.models.consolidation import Cluster, Proposal
from graphmem.settings import GraphmemSettings
from graphmem.store.cypher import analyst_queries
from tests.helpers import cli_env
from tests.integration.conftest import Client

SECRET = "Zorblax quinoa allergy"
#: Words of SECRET that occur nowhere else: none of them may be found after the erasure.
MARKERS = ("zorblax",)


@pytest.fixture(autouse=True)
def _leave_no_trace(graph: Graph, ns: str) -> Iterator[None]:
    yield
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns STARTS WITH $ns DETACH DELETE n", ns=ns, database_=graph.database
    )


class SplitExtractor:
    """Extracts each sentence of a message as a fact (the extraction plumbing under test is
    graphmem's; the LLM extractor itself is tested through the stub server elsewhere)."""

    name = "sentences"

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        return [
            ExtractedFact(text=part.strip(), episode_ids=(e.id,))
            for e in episodes
            for part in e.content.split(".")
            if part.strip()
        ]


class QuotingProposer:
    """A proposer whose raw answer and reasons quote the cluster's texts, as an LLM's do."""

    name = "quoting"
    model = "quote-1"

    def propose(self, cluster: Cluster) -> Proposal:
        texts = [f.text for f in cluster.facts]
        ops = [
            {"op": "KEEP", "facts": [f.number], "reason": f"keep {f.text!r}"} for f in cluster.facts
        ]
        raw = json.dumps({"reasoning": f"I read {texts}", "operations": ops})
        return Proposal(reasoning=f"I read {texts}", operations=ops, raw=raw)


def everything_in(graph: Graph, ns: str) -> list[str]:
    """Every property value of every node with this ns and of every relationship touching
    one, as text (embeddings left out): a raw scan of what the namespace holds."""
    rows, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE n.ns = $ns "
        "OPTIONAL MATCH (n)-[r]-() "
        "RETURN [k IN keys(n) WHERE k <> 'embedding' | n[k]] AS node, "
        "       collect([k IN keys(r) | r[k]]) AS rels",
        ns=ns,
        database_=graph.database,
    )
    return [json.dumps([r["node"], r["rels"]], default=str) for r in rows]


def assert_nowhere(graph: Graph, ns: str, *, where: str = "the namespace") -> None:
    for value in everything_in(graph, ns):
        for marker in MARKERS:
            assert marker not in value.lower(), f"{marker!r} still in {where}: {value[:300]}"


def index_hits(graph: Graph, ns: str, embedder: Any) -> list[str]:
    """What the four search indexes return for SECRET, queried directly."""
    vector = [float(x) for x in embedder.embed([SECRET])[0]]
    texts: list[str] = []
    for index in ("fact_text", "episode_content"):
        rows, _, _ = graph.driver.execute_query(
            "CALL db.index.fulltext.queryNodes($index, $q) YIELD node "
            "WHERE node.ns = $ns RETURN coalesce(node.text, node.content) AS t",
            index=index,
            q="zorblax OR quinoa",
            ns=ns,
            database_=graph.database,
        )
        texts += [r["t"] for r in rows]
    for index in ("fact_embedding", "episode_embedding"):
        rows, _, _ = graph.driver.execute_query(
            "CALL db.index.vector.queryNodes($index, 50, $v) YIELD node "
            "WHERE node.ns = $ns RETURN coalesce(node.text, node.content) AS t",
            index=index,
            v=vector,
            ns=ns,
            database_=graph.database,
        )
        texts += [r["t"] for r in rows]
    return texts


def tombstones(graph: Graph, ns: str) -> list[dict[str, Any]]:
    rows, _, _ = graph.driver.execute_query(
        "MATCH (t:Tombstone {ns: $ns}) RETURN properties(t) AS p, labels(t) AS labels",
        ns=ns,
        database_=graph.database,
    )
    for r in rows:
        assert r["labels"] == ["Tombstone"]
    return [r["p"] for r in rows]


def export(graph: Graph, ns: str) -> list[str]:
    """The namespace's nodes and relationships with every property, sorted: equal exports
    mean an unchanged namespace."""
    rows, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE n.ns = $ns "
        "OPTIONAL MATCH (n)-[r]->(m) "
        "RETURN labels(n) AS l, properties(n) AS p, type(r) AS t, properties(r) AS rp, "
        "       coalesce(m.id, m.fact_id, m.episode_id) AS m",
        ns=ns,
        database_=graph.database,
    )
    return sorted(json.dumps(dict(r), default=str, sort_keys=True) for r in rows)


@pytest.mark.both_versions
def test_forget_leaves_nothing_on_any_read_path(
    client_factory: Any, graph: Graph, ns: str, embedder: Any
) -> None:
    memory: Client = client_factory(
        "sync", ns=ns, extractor=SplitExtractor(), proposer=QuotingProposer()
    )
    kept = memory.remember("The user drinks green tea every morning", source="diary")
    secret = memory.remember(
        f"The user has a {SECRET}",
        source="intake-zorblax-form",
        tags=["zorblax"],
        metadata={"note": f"{SECRET} noted at intake"},
    )
    referring = memory.remember("The clinic keeps a note on that allergy", references=[secret.id])
    ingested = memory.ingest(
        [
            {"content": f"I was told about my {SECRET}. The clinic is on Main Street."},
            {"content": "Lunch was a salad."},
        ],
        session_id="visit-zorblax-1",
    )
    extracted = {f.text: f for f in ingested.facts}
    assert f"I was told about my {SECRET}" in extracted
    run = memory.consolidate(force=True)
    assert run.status == "finished"
    before_erasure = datetime.now(UTC)
    # The run's raw plan quotes the secret: the namespace holds it in many places.
    assert any("zorblax" in v.lower() for v in everything_in(graph, ns))

    first = memory.forget(secret.id, reason="the user asked to erase it")
    assert first.facts == (secret.id,) and not first.dry_run and first.units == 1
    assert run.run_id in first.runs_scrubbed
    assert [(f.flagged, f.relation) for f in first.flagged] == [(referring.id, "references")]
    second = memory.forget(session="visit-zorblax-1", reason="the user asked to erase it")
    assert set(second.episodes) == {e.id for e in ingested.episodes}
    assert set(second.derived) == {f.id for f in ingested.facts} == set(second.facts)

    # Every read path, with everything that could widen it.
    for kind in ("fact", "episode"):
        for options in ({}, {"include_retired": True}, {"as_of": before_erasure}):
            hits = memory.recall(SECRET, kinds=[kind], min_score=0, **options).hits
            assert all("zorblax" not in h.text.lower() for h in hits)
    block = memory.context(SECRET, budget_tokens=2000)
    assert "zorblax" not in block.text.lower()
    for erased in (secret.id, *second.episodes, *second.facts):
        with pytest.raises(ForgottenError):
            memory.get(erased)
    with pytest.raises(ForgottenError):
        memory.history(secret.id)
    assert "zorblax" not in memory.history(referring.id).model_dump_json().lower()
    stats = memory.stats()
    assert "zorblax" not in stats.model_dump_json().lower()
    assert (stats.forgotten_facts, stats.forgotten_episodes) == (1 + len(second.facts), 2)
    assert stats.review_open == 1  # the fact that referenced the erased one
    assert memory.get(kept.id).text == kept.text
    for q in analyst_queries().values():
        params = {**(q.example or {}), "ns": ns}
        if "fact_id" in params:
            params["fact_id"] = referring.id
        for record in graph.execute(q, **params):
            assert "zorblax" not in json.dumps(dict(record), default=str).lower(), q.name
    assert_nowhere(graph, ns)
    assert all("zorblax" not in (t or "").lower() for t in index_hits(graph, ns, embedder))
    # The runs' records keep their structure without the words.
    runs = memory.consolidation_runs()
    assert runs and runs[0].id == run.run_id
    # Tombstones: one per erased node, nothing but the allowed, content-free properties.
    stones = tombstones(graph, ns)
    assert len(stones) == 1 + len(second.episodes) + len(second.facts)
    for stone in stones:
        assert set(stone) <= TOMBSTONE_PROPERTIES
        assert stone["reason"] == "the user asked to erase it" and stone["actor"] == "api"
        assert len(stone["text_hash"]) == 64
    # The skeleton stays: the reference to the erased fact, now to its tombstone.
    rows, _, _ = graph.driver.execute_query(
        "MATCH (:Fact {id: $id})-[r:REFERENCES]->(t:Tombstone) RETURN t.fact_id AS erased",
        id=referring.id,
        database_=graph.database,
    )
    assert [r["erased"] for r in rows] == [secret.id]
    # The verification command finds nothing for each target, with and without the words.
    for target in (secret.id, "visit-zorblax-1", "intake-zorblax-form", first.erasure):
        report = memory.verify_forgotten(target)
        assert report.clean, report
        assert memory.verify_forgotten(target, text=SECRET).clean
    assert memory.verify_forgotten(kept.id).tombstones == 0


@pytest.mark.both_versions
def test_verify_reports_words_left_in_a_message(memory: Client, ns: str) -> None:
    # Forgetting an extracted fact leaves its message: the result and the check both say so.
    stored = memory.ingest([{"content": "My PIN is 4321. I like jazz."}]).episodes[0]
    fact = memory.remember("My PIN is 4321")
    linked = memory.remember("The user likes jazz")
    done = memory.forget(fact.id, reason="pin")
    assert done.same_text_kept == {} and done.messages_kept == {}
    report = memory.verify_forgotten(fact.id)
    assert not report.clean
    assert [f.where for f in report.findings] == [f"node Episode {stored.id} .content"]
    assert memory.get(linked.id).text == linked.text


def test_the_same_text_is_refused_or_flagged(memory: Client, graph: Graph, ns: str) -> None:
    fact = memory.remember("The user's locker code is 7781")
    episode = memory.ingest([{"content": "Call me on 555-0199, please."}]).episodes[0]
    memory.forget([fact.id, episode.id], reason="asked")
    count = memory.stats().facts
    with pytest.raises(ForgottenContentError) as refused:
        memory.remember("the user's LOCKER code is 7781!")
    assert refused.value.indexes == (0,)
    with pytest.raises(ForgottenContentError):
        memory.remember_many(["Fine", "The users locker code is 7781"])
    with pytest.raises(ForgottenContentError) as again:
        memory.ingest([{"content": "Hello"}, {"content": "call me on 555-0199 please"}])
    assert again.value.indexes == (1,)
    assert memory.stats().facts == count and memory.stats().episodes == 0
    # Allowed: stored, marked, and flagged for review with the tombstone as the cause.
    back = memory.remember("The user's locker code is 7781", allow_forgotten=True)
    assert back.previously_forgotten
    assert [(m.event, m.relation, m.cause_kind, m.cause_id) for m in back.review] == [
        ("previously_forgotten", "same_text", "tombstone", fact.id)
    ]
    result = memory.ingest([{"content": "Call me on 555-0199, please."}], allow_forgotten=True)
    assert result.episodes[0].previously_forgotten
    flagged = {f.flagged_id: f for f in memory.review()}
    assert set(flagged) == {back.id, result.episodes[0].id}
    hit = memory.recall("locker code", kinds=["fact"]).hits[0]
    assert hit.fact is not None and hit.fact.review
    assert "review" in memory.context("locker code", budget_tokens=500).text


def _race(memory: Memory, first_id: str, text: str) -> tuple[Any, Any]:
    """Forgets ``first_id`` and remembers ``text`` in two threads released together: what
    the remember gave (a Fact or the ForgottenContentError) and the forget's result."""
    gate = threading.Barrier(2)
    done: dict[str, Any] = {}

    def forget() -> None:
        gate.wait()
        done["forget"] = memory.forget([first_id], reason="privacy request")

    def remember() -> None:
        gate.wait()
        try:
            done["remember"] = memory.remember(text)
        except ForgottenContentError as exc:
            done["remember"] = exc

    threads = [threading.Thread(target=forget), threading.Thread(target=remember)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return done["remember"], done["forget"]


def test_a_remember_racing_a_forget_of_the_same_text_never_brings_it_back_unflagged(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    """50 rounds: a fact is stored, then forgotten by one thread while another remembers the
    same words. Each remember is refused (the tombstone came first), or stored flagged as
    previously forgotten, or stored before the erasure and then reported by it (same_text_kept)
    and flagged for review: never a believed copy that nothing marks."""
    memory = Memory(test_settings, target=graph.target, embedder=embedder, ns=ns).connect()
    outcomes: collections.Counter[str] = collections.Counter()
    try:
        for round_ in range(50):
            text = f"The user's door code is {round_}-4417."
            first = memory.remember(text)
            again, result = _race(memory, first.id, text)
            copies, _, _ = graph.driver.execute_query(
                "MATCH (f:Fact {ns: $ns}) WHERE f.text = $text AND f.retired_at IS NULL "
                "RETURN f.id AS id, f.previously_forgotten AS marked, "
                "EXISTS { (f)-[o:FLAGGED_BY]->() WHERE o.closed_at IS NULL } AS flagged",
                ns=ns,
                text=text,
                database_=graph.database,
            )
            assert all(c["flagged"] for c in copies), (round_, [dict(c) for c in copies])
            if isinstance(again, ForgottenContentError):
                outcomes["refused"] += 1
                assert not copies
            elif again.previously_forgotten:
                outcomes["stored after, marked"] += 1
            else:
                outcomes["stored before, reported"] += 1
                assert result.same_text_kept == {first.id: (again.id,)}
                assert any(
                    f.flagged == again.id and f.relation == "same_text" for f in result.flagged
                )
    finally:
        memory.close()
    assert sum(outcomes.values()) == 50, outcomes


def test_extraction_does_not_bring_forgotten_text_back(client_factory: Any, ns: str) -> None:
    memory: Client = client_factory("sync", ns=ns, extractor=SplitExtractor())
    first = memory.ingest([{"content": "I am allergic to kiwi. I live in Oslo."}])
    kiwi = next(f for f in first.facts if "kiwi" in f.text)
    memory.forget(kiwi.id, reason="asked")
    later = memory.ingest([{"content": "I am allergic to kiwi. I cycle."}])
    texts = {f.text for f in later.facts}
    assert "I am allergic to kiwi" not in texts and "I cycle" in texts
    assert later.forgotten_skipped == 1


@pytest.mark.parametrize("batch_size", [1, 10])
def test_copies_erased_by_the_same_forget_are_not_reported_kept(
    client_factory: Any, ns: str, batch_size: int
) -> None:
    """The same words extracted from three messages are erased with them, in one unit or in
    several: none is a copy kept or flagged; the one remembered on its own is."""
    memory: Client = client_factory("sync", ns=ns, extractor=SplitExtractor())
    messages = [
        memory.ingest([{"content": f"My PIN is 4321. Note {i}."}]).episodes[0].id for i in range(3)
    ]
    kept = memory.remember("My PIN is 4321")
    counted: list[int] = []
    done = memory.forget(messages, reason="pin", batch_size=batch_size, progress=counted.append)
    assert len(done.derived) == 6
    assert sum(counted) == done.erased == 9  # the progress counts the derived facts too
    copies = {k: v for k, v in done.same_text_kept.items() if v}
    assert copies and set(copies.values()) == {(kept.id,)}
    assert {f.flagged for f in done.flagged} == {kept.id}
    assert {f.flagged_id for f in memory.review()} == {kept.id}


def test_review_flags_appear_and_close(client_factory: Any, ns: str) -> None:
    memory: Client = client_factory("sync", ns=ns, extractor=SplitExtractor())
    result = memory.ingest([{"content": "I work at Acme. My desk is on floor 3."}])
    works = next(f for f in result.facts if "Acme" in f.text)
    desk = next(f for f in result.facts if "desk" in f.text)
    badge = memory.remember("The Acme badge opens door 7", references=[works.id])
    # Superseding works flags the fact derived with it from the same message.
    newer = memory.remember("I work at Globex", supersedes=[works.id], reason="changed jobs")
    flags = memory.review()
    assert {(f.flagged_id, f.event, f.relation, f.cause_id) for f in flags} == {
        (desk.id, "superseded", "derived_with", works.id),
        (badge.id, "superseded", "references", works.id),
    }
    assert all(f.actor == "api" and f.reason == "changed jobs" for f in flags)
    assert {f.at for f in flags} == {newer.recorded_at}  # the supersession's own time
    assert memory.stats().review_open == 2
    assert newer.id not in {f.flagged_id for f in flags}
    hit = memory.recall("badge door", kinds=["fact"]).hits[0]
    assert hit.id == badge.id and hit.fact is not None and hit.fact.review[0].event == "superseded"
    # Confirming closes a flag; superseding or forgetting the flagged fact closes it too.
    closed = memory.confirm(badge.id, reason="badge still valid")
    assert [(c.flagged_id, c.closing) for c in closed] == [(badge.id, "confirmed")]
    memory.remember("My desk is on floor 4", supersedes=[desk.id])
    assert memory.review() == []
    history = memory.review(open_only=False)
    assert {(f.flagged_id, f.closing) for f in history} == {
        (badge.id, "confirmed"),
        (desk.id, "superseded"),
    }
    # Forgetting a fact flags what references it; forgetting the flagged fact closes that.
    note = memory.remember("Door 7 leads to the lab", references=[badge.id])
    erased = memory.forget(badge.id, reason="asked")
    assert [(f.flagged_id, f.event, f.at) for f in memory.review()] == [
        (note.id, "forgotten", erased.at)  # made at the erasure's one time
    ]
    memory.forget(note.id, reason="asked")
    assert memory.review() == []
    with pytest.raises(ForgottenError):
        memory.confirm(note.id)
    with pytest.raises(NotFoundError):
        memory.confirm("no-such-fact")


def test_retract_and_merge_flag_what_rested_on_the_fact(memory: Client) -> None:
    base = memory.remember("The office is in Leeds")
    user = memory.remember("Parking is free near the office", references=[base.id])
    memory.retract(base.id, reason="never was")
    (flag,) = memory.review()
    assert (flag.flagged_id, flag.event, flag.cause_id) == (user.id, "retracted", base.id)


def test_forgetting_in_one_namespace_touches_no_other(
    client_factory: Any, graph: Graph, ns: str
) -> None:
    one: Client = client_factory("sync", ns=f"{ns}-one")
    two: Client = client_factory("sync", ns=f"{ns}-two")
    for client in (one, two):
        client.remember("Shared words about a zorblax")
        client.ingest([{"content": "A zorblax message"}], session_id="s")
    before = export(graph, f"{ns}-two")
    done = one.forget(everything=True, reason="tenant left")
    assert len(done.facts) == 1 and len(done.episodes) == 1
    assert export(graph, f"{ns}-two") == before
    assert_nowhere(graph, f"{ns}-one")
    assert two.remember("Shared words about a zorblax").text  # not forgotten there
    (stone,) = [t for t in tombstones(graph, f"{ns}-one") if t["kind"] == "fact"]
    one_hash = stone["text_hash"]
    one.remember("Shared words about a zorblax", allow_forgotten=True)
    two.forget(everything=True, reason="tenant left")
    other = {t["text_hash"] for t in tombstones(graph, f"{ns}-two") if t["kind"] == "fact"}
    assert one_hash not in other  # keyed per namespace: hashes cannot be compared across


def test_dry_run_writes_nothing(memory: Client, graph: Graph, ns: str) -> None:
    fact = memory.remember("The user's bike is red", source="chat")
    ref = memory.remember("The bike is kept in the shed", references=[fact.id])
    before = export(graph, ns)
    preview = memory.forget(source="chat", reason="asked", dry_run=True)
    assert preview.dry_run and preview.facts == (fact.id,) and preview.units == 0
    assert [f.flagged for f in preview.flagged] == [ref.id]
    assert export(graph, ns) == before
    done = memory.forget(source="chat", reason="asked")
    assert done.facts == preview.facts and done.flagged == preview.flagged
    again = memory.forget(fact.id, reason="asked")
    assert again.facts == () and again.already_forgotten == (fact.id,)


def test_bad_input_changes_nothing(memory: Client, graph: Graph, ns: str) -> None:
    fact = memory.remember("Something to keep")
    before = export(graph, ns)
    calls: list[Callable[[], object]] = [
        lambda: memory.forget(reason="no selector"),
        lambda: memory.forget(fact.id, source="x", reason="two selectors"),
        lambda: memory.forget([], reason="no ids"),
        lambda: memory.forget(fact.id, reason=""),
        lambda: memory.forget(fact.id, reason="r", batch_size=0),
        lambda: memory.forget(fact.id, reason="r", everything="yes"),
    ]
    for call in calls:
        with pytest.raises(InvalidInputError):
            call()
    with pytest.raises(NotFoundError) as missing:
        memory.forget([fact.id, "nope"], reason="r")
    assert missing.value.ids == ("nope",)
    assert export(graph, ns) == before


def test_a_killed_forget_leaves_each_unit_whole(
    graph: Graph, embedder: Any, client_factory: Any, ns: str
) -> None:
    memory: Client = client_factory("sync", ns=ns, extractor=SplitExtractor())
    memory.ingest(
        [{"content": f"Message {i} about a zorblax. Plain words {i}."} for i in range(6)],
        session_id="doomed",
    )
    ids_before = {e["id"] for e in _nodes(graph, ns, "Episode")}
    env = {
        **os.environ,
        **cli_env(graph, ns),
        "KILL_DIMENSION": str(embedder.dimension),
        "KILL_MODEL_ID": embedder.model_id,
    }
    child = Path(__file__).with_name("forget_child.py")
    killed, erased = [], []
    for kill_at in (2, 5, 9):
        out = subprocess.run(
            [sys.executable, str(child)],
            env={**env, "KILL_AT": str(kill_at)},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=Path(__file__).parents[2],
        )
        reported = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        done_units = [r for r in reported if "unit" in r]
        assert out.returncode in (-9, 0), out.stderr[-2000:]
        killed.append(out.returncode == -9)
        episodes = {e["id"]: e for e in _nodes(graph, ns, "Episode")}
        erased.append(len(ids_before) - len(episodes))
        stones = {t.get("episode_id") or t.get("fact_id") for t in tombstones(graph, ns)}
        for unit in done_units:
            assert unit["unit"] <= len(stones)
        # Each message is either whole (an episode with its words and facts) or erased whole
        # (a tombstone, and so are the facts derived only from it).
        for episode_id in ids_before:
            if episode_id in episodes:
                assert "zorblax" in episodes[episode_id]["content"]
                assert episode_id not in stones
            else:
                assert episode_id in stones
        for fact in _nodes(graph, ns, "Fact"):
            rows, _, _ = graph.driver.execute_query(
                "MATCH (:Fact {id: $id})-[:DERIVED_FROM]->(e:Episode) RETURN count(e) AS n",
                id=fact["id"],
                database_=graph.database,
            )
            assert rows[0]["n"] == 1, "a fact whose message was erased survived"
    assert all(killed) and 0 < erased[-1] < len(ids_before), (killed, erased)
    # Running it again finishes the erasure.
    memory.forget(session="doomed", reason="finish")
    assert _nodes(graph, ns, "Episode") == [] and _nodes(graph, ns, "Fact") == []
    assert_nowhere(graph, ns)


def _nodes(graph: Graph, ns: str, label: str) -> list[dict[str, Any]]:
    rows, _, _ = graph.driver.execute_query(
        f"MATCH (n:{label} {{ns: $ns}}) RETURN properties(n) AS p",
        ns=ns,
        database_=graph.database,
        routing_=neo4j.RoutingControl.READ,
    )
    return [r["p"] for r in rows]


def test_forget_with_the_async_client(client_factory: Any, ns: str) -> None:
    memory: Client = client_factory("async", ns=ns)
    fact = memory.remember("An async secret")
    done = memory.forget(fact.id, reason="asked")
    assert done.facts == (fact.id,)
    assert memory.verify_forgotten(fact.id, text="An async secret").clean
    with pytest.raises(ForgottenContentError):
        memory.remember("an async secret")
    assert memory.review() == []


def test_copies_of_reasons_go_and_a_whole_namespace_closes_its_flags(
    client_factory: Any, graph: Graph, ns: str
) -> None:
    memory: Client = client_factory("sync", ns=ns, extractor=SplitExtractor())
    old = memory.remember("The meeting room is B2")
    note = memory.remember("Bring the projector to the meeting room", references=[old.id])
    new = memory.remember(
        "The meeting room is C4", supersedes=[old.id], reason="moved after the zorblax leak"
    )
    (flag,) = memory.review()
    assert flag.reason == "moved after the zorblax leak"  # the flag copies the reason
    memory.confirm(note.id, reason="zorblax projector confirmed")
    memory.forget(new.id, reason="asked")
    memory.forget(note.id, reason="asked")
    assert_nowhere(graph, ns)
    # A dry run of the whole namespace reports what the real run does, derived facts included.
    memory.ingest([{"content": "I own a red kayak. It sleeps in the garage."}], session_id="s")
    later = memory.remember("The kayak needs new paint", references=[old.id])
    preview = memory.forget(everything=True, reason="tenant left", dry_run=True)
    done = memory.forget(everything=True, reason="tenant left")
    assert preview.derived and set(preview.derived) == set(done.derived)
    assert (set(preview.facts), set(preview.episodes)) == (set(done.facts), set(done.episodes))
    assert later.id in done.facts and done.flagged == ()
    rows, _, _ = graph.driver.execute_query(
        "MATCH ()-[x:FLAGGED_BY {ns: $ns}]->() WHERE x.closed_at IS NULL RETURN count(x) AS n",
        ns=ns,
        database_=graph.database,
    )
    assert rows[0]["n"] == 0


class ForgettingProposer(QuotingProposer):
    """Quotes the cluster like an LLM, and meanwhile (while the run waits on it) another
    client forgets the fact that holds the secret."""

    def __init__(self, forget: Any) -> None:
        self.forget = forget

    def propose(self, cluster: Cluster) -> Proposal:
        proposal = super().propose(cluster)
        for fact in cluster.facts:
            if "zorblax" in fact.text.lower():
                self.forget(fact.id)
        return proposal


def test_a_run_that_read_a_fact_forgotten_meanwhile_records_no_words(
    client_factory: Any, graph: Graph, ns: str
) -> None:
    other: Client = client_factory("sync", ns=ns)
    memory: Client = client_factory(
        "sync",
        ns=ns,
        proposer=ForgettingProposer(lambda fact_id: other.forget(fact_id, reason="asked")),
    )
    memory.remember(f"The user has a {SECRET}")
    memory.remember("The user has a peanut allergy")
    run = memory.consolidate(force=True)
    assert run.status == "finished"
    assert_nowhere(graph, ns)
    (record,) = memory.consolidation_runs()
    assert "[erased]" in record.model_dump_json()
