"""The guarded read path never shows a secret: not the erasure key, not an API key's hash, not
a tombstone's keyed hash. The attack it defeats: read the erasure key and a tombstone's hash
through `graphmem cypher run`, then try every four-digit code until one hashes to the
tombstone's. Run against the real Neo4j through `graphmem cypher run`, `Graph.read` and
`AsyncGraph.read`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.client import Memory
from graphmem.client.aio import AsyncMemory
from graphmem.client.graph import Graph
from graphmem.core.forget.hashing import keyed_hash, namespace_key
from graphmem.embed.embedder import Embedder
from graphmem.errors import QueryRefusedError
from graphmem.settings import GraphmemSettings
from graphmem.store import guard
from graphmem.store.cypher import analyst_queries
from tests.helpers import cli_env

#: Runs on Neo4j 5.26 too (the guarded read: the plan operators it allows are named per version).
pytestmark = pytest.mark.both_versions

ERASED = "Erin's alarm code is 1373."


@dataclass(frozen=True)
class Erased:
    """A namespace whose one fact was forgotten, a live key, and the secrets as the database
    holds them (read here over the driver, as only graphmem itself reads them)."""

    ns: str
    fact_id: str
    erasure_key: str
    tombstone_hash: str
    key_hash: str

    def secrets(self) -> tuple[str, str, str]:
        return (self.erasure_key, self.tombstone_hash, self.key_hash)


def _brute_force(erasure_key: str, tombstone_hash: str, ns: str) -> str | None:
    """The attack: every code from 0000 to 9999, hashed as forget hashed the text."""
    key = namespace_key(erasure_key, ns)
    for code in range(10_000):
        guess = f"Erin's alarm code is {code:04d}."
        if keyed_hash(key, guess) == tombstone_hash:
            return guess
    return None


@pytest.fixture
def erased(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> Iterator[Erased]:
    with Memory(test_settings, target=graph.target, embedder=embedder, ns=ns) as memory:
        memory.remember("Erin waters the plants on Sundays.")
        fact = memory.remember(ERASED)
        memory.forget([fact.id], reason="privacy request")
        made = memory.keys.create(f"analyst-{ns}", role="read", namespaces=[ns])
        try:
            with graph.driver.session(database=graph.database) as session:
                row = session.run(
                    "MATCH (s:GraphmemSchema) WHERE s.erasure_key IS NOT NULL "
                    "MATCH (t:Tombstone {ns: $ns, fact_id: $id}) "
                    "MATCH (k:GraphmemApiKey {id: $key}) "
                    "RETURN s.erasure_key AS key, t.text_hash AS hash, k.hash AS key_hash",
                    ns=ns,
                    id=fact.id,
                    key=made.api_key.id,
                ).single()
            assert row is not None
            yield Erased(ns, fact.id, row["key"], row["hash"], row["key_hash"])
        finally:
            memory.keys.revoke(made.api_key.id)


def test_the_attack_works_on_what_the_database_holds(erased: Erased) -> None:
    """The attack itself, on the values read over the driver: so that the tests below, which
    find neither value on the guarded path, test something."""
    assert _brute_force(erased.erasure_key, erased.tombstone_hash, erased.ns) == ERASED


#: The attacker's queries and what each refusal names.
ATTACKS = [
    ("MATCH (s:GraphmemSchema) RETURN s.erasure_key AS k", "label GraphmemSchema"),
    ("MATCH (n) WHERE n.erasure_key IS NOT NULL RETURN n.erasure_key AS k", "erasure_key"),
    ("MATCH (n) RETURN n.`erasure_key` AS k", "erasure_key"),
    ("MATCH (n) WHERE n.erasure_key STARTS WITH 'a' RETURN count(*) AS n", "erasure_key"),
    ("MATCH (n) RETURN n['erasure' + '_key'] AS k", "computed property access"),
    ("MATCH (n) RETURN n[$key] AS k", "computed property access"),
    ("MATCH (n) UNWIND keys(n) AS k RETURN k, n[k] AS v", "computed property access"),
    ("MATCH (n) RETURN [k IN keys(n) | n[k]] AS v", "computed property access"),
    ("MATCH (n) WITH n, keys(n) AS ks UNWIND range(0, size(ks) - 1) AS i RETURN n[ks[i]]",
     "computed property access"),
    ("MATCH (n) RETURN collect(n)[0][$key] AS v", "computed property access"),
    ("MATCH (n) RETURN CASE WHEN true THEN n END[$key] AS v", "computed property access"),
    ("MATCH (s) WHERE 'erasure_key' IN keys(s) WITH s AS then UNWIND keys(then) AS k "
     "RETURN k, reverse(then[k]) AS v", "computed property access"),
    ("MATCH (t:Tombstone) WITH t AS by UNWIND keys(by) AS k RETURN reverse(by[k]) AS v",
     "computed property access"),
    ("MATCH (n) WITH n AS cache RETURN cache[$key] AS v", "variable name cache"),
    ("MATCH (n) RETURN properties(n) AS p", "whole property map"),
    ("MATCH (n) RETURN n {.*} AS p", "whole property map"),
    ("MATCH (n) RETURN n {.id, .erasure_key} AS p", "erasure_key"),
    ("MATCH (t:Tombstone {ns: $ns}) RETURN t.text_hash AS h", "text_hash"),
    ("MATCH (t:Tombstone {ns: $ns}) RETURN t.source_hash AS h", "source_hash"),
    ("MATCH (t:Tombstone {ns: $ns, text_hash: 'x'}) RETURN count(t) AS n", "text_hash"),
    ("MATCH (t:Tombstone {ns: $ns}) RETURN properties(t) AS p", "whole property map"),
    ("MATCH (k:GraphmemApiKey) RETURN k.name AS name", "label GraphmemApiKey"),
    ("MATCH (n) RETURN n.hash AS h", "property hash"),
    ("MATCH (n) RETURN n.mac AS h", "property mac"),
    ("MATCH (f:Fact {ns: $ns}) RETURN f.text AS v UNION MATCH (n) RETURN n.erasure_key AS v",
     "erasure_key"),
    ("CALL () { MATCH (n) RETURN n.erasure_key AS v } RETURN v", "erasure_key"),
    ("MATCH (f:Fact) WHERE EXISTS { MATCH (s) WHERE s.erasure_key > 'a' } RETURN count(f) AS n",
     "erasure_key"),
    ("RETURN COUNT { MATCH (t:Tombstone) WHERE t.text_hash STARTS WITH 'a' } AS n", "text_hash"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "named"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_every_way_to_a_secret_is_refused_on_the_python_read(
    graph: Graph, erased: Erased, text: str, named: str
) -> None:
    given = {"ns": erased.ns, "key": "erasure_key"}
    params = {name: value for name, value in given.items() if f"${name}" in text}
    with pytest.raises(QueryRefusedError) as refused:
        graph.read(text, params)
    assert named in str(refused.value), refused.value
    assert "secret" in str(refused.value)


def test_the_attack_fails_through_graphmem_cypher_run(graph: Graph, erased: Erased) -> None:
    env = cli_env(graph, erased.ns)

    def run(text: str) -> Any:
        return CliRunner().invoke(main, ["cypher", "run", "-q", text, "--json"], env=env)

    seen = []
    for text, named in ATTACKS:
        if "$key" in text:
            result = CliRunner().invoke(
                main, ["cypher", "run", "-q", text, "-p", "key=erasure_key", "--json"], env=env
            )
        else:
            result = run(text)
        assert result.exit_code == 1 and result.stdout == "", (text, result.output)
        error = json.loads(result.stderr)["error"]
        assert error["type"] == "QueryRefusedError" and named in error["message"], error
        seen.append(result.output)
    # What the path does return, the whole graph and every path of it included, holds no secret.
    for text in [
        "MATCH (n) RETURN n",
        "MATCH p = (n)-[*0..1]-() RETURN p",
        "MATCH (n) RETURN collect(n) AS all",
        "MATCH (n) RETURN labels(n) AS labels, keys(n) AS keys",
        "MATCH (t:Tombstone {ns: $ns}) RETURN t",
    ]:
        result = run(text)
        assert result.exit_code == 0, (text, result.output)
        seen.append(result.output)
    everything = "\n".join(seen)
    assert not any(secret in everything for secret in erased.secrets())
    assert erased.fact_id in everything  # the tombstone itself is there


def test_returned_nodes_lose_their_secrets(graph: Graph, erased: Erased) -> None:
    rows = graph.read("MATCH (n) RETURN n", limit=100_000)
    by_labels: dict[str, list[dict[str, Any]]] = {}
    for record in rows:
        node = record["n"]
        by_labels.setdefault(":".join(sorted(node.labels)), []).append(dict(node))
    assert by_labels["GraphmemSchema"] == [{}]  # an internal node: labels, no properties
    assert all(p == {} for p in by_labels.get("GraphmemApiKey", []))
    tombstones = [p for p in by_labels["Tombstone"] if p.get("fact_id") == erased.fact_id]
    assert len(tombstones) == 1
    assert tombstones[0]["reason"] == "privacy request"
    assert not {"text_hash", "source_hash"} & tombstones[0].keys()
    facts = [p for p in by_labels["Fact"] if p.get("ns") == erased.ns]
    assert facts and all("text_hash" not in p and p["text"] for p in facts)
    # A path's nodes and a relationship's ends are the same nodes, redacted alike.
    paths = graph.read("MATCH p = (t:Tombstone {ns: $ns})-[*0..1]-() RETURN p", {"ns": erased.ns})
    for record in paths:
        for node in record["p"].nodes:
            assert not {"text_hash", "source_hash", "session_hash"} & set(node.keys())


def test_counting_and_listing_erasures_still_works(graph: Graph, erased: Erased) -> None:
    (row,) = graph.read("MATCH (t:Tombstone {ns: $ns}) RETURN count(t) AS n", {"ns": erased.ns})
    assert row["n"] == 1
    (total,) = graph.read("MATCH (t:Tombstone) RETURN count(*) AS n")
    assert total["n"] >= 1
    erasures = graph.execute(
        analyst_queries()["erasures_between"],
        ns=erased.ns,
        since="2000-01-01T00:00:00Z",
        until="2100-01-01T00:00:00Z",
        limit=10,
    )
    assert [r["erased_id"] for r in erasures] == [erased.fact_id]


def test_the_result_layer_holds_when_the_plan_check_is_passed(
    graph: Graph, erased: Erased, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second layer alone (the plan check switched off): a secret value in a result
    refuses it, and secret properties leave the nodes returned."""
    monkeypatch.setattr(guard, "check_secrets", lambda *args: None)
    for text, named in [
        ("MATCH (s:GraphmemSchema) RETURN s.erasure_key AS k", "secret value"),
        ("MATCH (s:GraphmemSchema) RETURN 'x' + s.erasure_key + 'y' AS k", "secret value"),
        ("MATCH (k:GraphmemApiKey) RETURN k.hash AS h", "secret value"),
        ("MATCH (t:Tombstone {ns: $ns}) RETURN t.text_hash AS h", "tombstone's keyed hash"),
        ("MATCH (t:Tombstone {ns: $ns}) RETURN {h: [toUpper(t.text_hash)]} AS h",
         "tombstone's keyed hash"),
    ]:  # fmt: skip
        with pytest.raises(QueryRefusedError, match=named):
            graph.read(text, {"ns": erased.ns} if "$ns" in text else None)
    (row,) = graph.read("MATCH (s:GraphmemSchema) RETURN s")
    assert dict(row["s"]) == {}
    with pytest.raises(QueryRefusedError, match="secret value"):
        graph.read("MATCH (s:GraphmemSchema) RETURN properties(s) AS p")


def test_the_async_read_is_guarded_alike(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, erased: Erased
) -> None:
    async def flow() -> None:
        async with AsyncMemory(
            test_settings, target=graph.target, embedder=embedder, ns=erased.ns
        ) as memory:
            with pytest.raises(QueryRefusedError, match="erasure_key"):
                await memory.graph.read("MATCH (n) RETURN n.erasure_key AS k")
            with pytest.raises(QueryRefusedError, match="whole property map"):
                await memory.graph.read("MATCH (n) RETURN properties(n) AS p")
            rows = await memory.graph.read(
                "MATCH (t:Tombstone {ns: $ns}) RETURN t", {"ns": erased.ns}
            )
            (tombstone,) = [r["t"] for r in rows]
            assert "text_hash" not in tombstone and tombstone["fact_id"] == erased.fact_id

    asyncio.run(flow())
