"""A fact's importance against the real Neo4j: given on every surface that remembers (library,
REST and the remote client, MCP, CLI), stored only when given, refused when bad with nothing
written, kept by export and import, absent on extracted facts; the score read from it, idle
time and access count; and recall weighing it when asked to."""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp import Client as McpClient

from graphmem.cli import main
from graphmem.client import AsyncMemory, Memory
from graphmem.client.graph import Graph
from graphmem.core.extraction import ExtractedFact
from graphmem.core.importance import ImportanceConfig, fact_score
from graphmem.embed.embedder import Embedder
from graphmem.errors import InvalidInputError
from graphmem.mcp.options import McpOptions
from graphmem.mcp.server import build_server, warm_memory
from graphmem.models import Episode, FactInput
from graphmem.remote import RemoteMemory
from graphmem.settings import GraphmemSettings
from tests.helpers import cli_env
from tests.integration.conftest import Client
from tests.service import Served, bearer, new_key

post = functools.partial(httpx.post, timeout=120)
get = functools.partial(httpx.get, timeout=120)

#: Values remember must refuse, with the words its error names.
BAD = [1.5, -0.1, float("nan"), float("inf"), True, "0.5", [0.5]]


def _stored(graph: Graph, ns: str) -> list[dict[str, Any]]:
    """Each fact of the namespace: its text and whether and how its importance is stored."""
    rows, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns}) RETURN f.text AS text, 'importance' IN keys(f) AS has, "
        "f.importance AS importance ORDER BY f.text",
        ns=ns,
        database_=graph.database,
    )
    return [dict(r) for r in rows]


def _set(graph: Graph, fact_id: str, assignments: str, **params: Any) -> None:
    graph.driver.execute_query(
        f"MATCH (f:Fact {{id: $id}}) SET {assignments}",
        id=fact_id,
        database_=graph.database,
        **params,
    )


# --- the library ---------------------------------------------------------------------------------
def test_remember_stores_the_importance_given_and_nothing_otherwise(
    memory: Client, graph: Graph, ns: str
) -> None:
    given = memory.remember("Ada is allergic to penicillin.", importance=0.9)
    plain = memory.remember("Ada likes green tea.")
    edge = memory.remember("Ada's cat is called Tom.", importance=0)
    assert (given.importance, plain.importance, edge.importance) == (0.9, None, 0.0)
    assert memory.get(given.id).importance == 0.9
    assert memory.get(plain.id).importance is None
    batch = memory.remember_many(
        [
            {"text": "Ada flies to Oslo on Friday.", "importance": 1},
            FactInput(text="Ada reads crime novels.", importance=0.2),
            "Ada has a blue bike.",
        ]
    )
    assert [f.importance for f in batch] == [1.0, 0.2, None]
    assert [memory.get(f.id).importance for f in batch] == [1.0, 0.2, None]
    stored = {row["text"]: (row["has"], row["importance"]) for row in _stored(graph, ns)}
    assert stored == {
        "Ada has a blue bike.": (False, None),
        "Ada flies to Oslo on Friday.": (True, 1.0),
        "Ada is allergic to penicillin.": (True, 0.9),
        "Ada likes green tea.": (False, None),
        "Ada reads crime novels.": (True, 0.2),
        "Ada's cat is called Tom.": (True, 0.0),
    }
    hit = memory.recall("What is Ada allergic to?", k=1, track_access=False).hits[0]
    assert hit.fact is not None and hit.fact.importance == 0.9


@pytest.mark.parametrize("value", BAD, ids=repr)
def test_remember_refuses_a_bad_importance_and_stores_nothing(
    memory: Client, graph: Graph, ns: str, value: object
) -> None:
    with pytest.raises(InvalidInputError, match="importance"):
        memory.remember("Ada moved to Rome.", importance=value)
    with pytest.raises(InvalidInputError, match="importance"):
        memory.remember_many(["Ada moved to Rome.", {"text": "Ada is 40.", "importance": value}])
    assert _stored(graph, ns) == []


def test_extracted_facts_carry_no_importance(
    client_factory: Callable[..., Client], graph: Graph, ns: str
) -> None:
    class Sentences:
        name = "sentences"

        def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
            return [
                ExtractedFact(text=part.strip(), episode_ids=(e.id,))
                for e in episodes
                for part in e.content.split(".")
                if part.strip()
            ]

    memory = client_factory("sync", ns=ns, extractor=Sentences())
    result = memory.ingest(["Ada lives in Lisbon. Ada works at Acme."], extract=True)
    assert len(result.facts) == 2 and all(f.importance is None for f in result.facts)
    assert [row["has"] for row in _stored(graph, ns)] == [False, False]
    with pytest.raises(ValueError, match="importance"):
        ExtractedFact(text="x", episode_ids=("e",), importance=0.9)  # type: ignore[call-arg]


def test_export_and_import_keep_the_importance(memory: Client, graph: Graph, ns: str) -> None:
    kept = memory.remember("Ada's passport expires in May.", importance=0.75)
    memory.remember("Ada owns a kettle.")
    raw: Any = memory.raw
    if memory.loop is None:
        doc = list(raw.export(ns))
    else:

        async def collect() -> list[dict[str, Any]]:
            return [record async for record in await raw.export(ns)]

        doc = memory.loop.run_until_complete(collect())
    (node,) = [r for r in doc if r["record"] == "node" and r["key"] == kept.id]
    assert node["properties"]["importance"] == 0.75
    memory.import_(json.loads(json.dumps(doc)), ns=f"{ns}-copy")
    stored = {row["text"]: (row["has"], row["importance"]) for row in _stored(graph, f"{ns}-copy")}
    assert stored == {
        "Ada's passport expires in May.": (True, 0.75),
        "Ada owns a kettle.": (False, None),
    }


# --- the score -----------------------------------------------------------------------------------
def test_the_score_follows_importance_idle_time_and_access(
    memory: Client, graph: Graph, ns: str
) -> None:
    config = ImportanceConfig()  # the settings' defaults: 0.5, 30 days, 0.25
    now = datetime.now(UTC)
    important = memory.remember("Ada's blood type is O negative.", importance=0.9)
    default = memory.remember("Ada had pasta for lunch.")

    def score(fact_id: str) -> float:
        return fact_score(memory.get(fact_id), now, config)

    # Just recorded, never used: the caller's importance, or the default.
    assert score(important.id) == pytest.approx(0.9, abs=1e-3)
    assert score(default.id) == pytest.approx(0.5, abs=1e-3)
    # Idle for 60 days: a default fact decays by e^-2; an explicit importance is its floor.
    long_ago = now - timedelta(days=60)
    for fact in (important, default):
        _set(graph, fact.id, "f.recorded_at = $at", at=long_ago)
    assert score(default.id) == pytest.approx(0.5 * math.exp(-2), abs=1e-3)
    assert score(important.id) == pytest.approx(0.9 * 0.9, abs=1e-3)
    # Used 30 days ago, four times: idle from the last use, reinforced by the count.
    _set(
        graph,
        default.id,
        "f.last_accessed_at = $at, f.access_count = 4",
        at=now - timedelta(days=30),
    )
    assert score(default.id) == pytest.approx(
        0.5 * math.exp(-1) * (1 + 0.25 * math.log(5)), abs=1e-3
    )
    # A recall that returns the fact stamps it: idle time starts again, and the count grows.
    hits = memory.recall("What did Ada have for lunch?", k=1).hits
    assert [h.id for h in hits] == [default.id]
    assert score(default.id) == pytest.approx(0.5 * (1 + 0.25 * math.log(6)), abs=1e-3)


# --- recall --------------------------------------------------------------------------------------
def _twins(memory: Client, graph: Graph) -> tuple[str, str]:
    """Two facts with the same text, recorded in one transaction (equal in every score), the
    one whose id sorts last given the higher importance: ids break ties, so an unweighed
    recall lists it second. Returns (the important one, the other)."""
    facts = memory.remember_many(["Ada's locker code is 4417.", "Ada's locker code is 4417."])
    low, high = sorted(f.id for f in facts)
    _set(graph, high, "f.importance = 0.9")
    _set(graph, low, "f.importance = 0.1")
    return high, low


def test_recall_weighs_importance_only_when_asked(memory: Client, graph: Graph) -> None:
    high, low = _twins(memory, graph)
    query = "What is Ada's locker code?"
    off = memory.recall(query, kinds=["fact"], track_access=False).hits
    assert [h.id for h in off] == [low, high]
    assert off[0].score == off[1].score
    assert [h.scores.importance for h in off] == [None, None]
    on = memory.recall(
        query, kinds=["fact"], track_access=False, config={"importance_weight": 1.0}
    ).hits
    assert [h.id for h in on] == [high, low]
    scores = [h.scores.importance for h in on]
    assert scores == [pytest.approx(0.9, abs=1e-4), pytest.approx(0.1, abs=1e-4)]

    # The odds of the score are multiplied by 1 + weight * (score - default), the default
    # being 0.5.
    def odds(p: float) -> float:
        return p / (1 - p)

    for hit in on:
        factor = 1 + (hit.scores.importance or 0) - 0.5
        assert odds(hit.score) == pytest.approx(odds(off[0].score) * factor, rel=1e-3)
    # A weight so strong that a factor would go below 0 leaves it at 0: a score of 0, which
    # the gate drops.
    strong = memory.recall(
        query, kinds=["fact"], track_access=False, config={"importance_weight": 10.0}
    ).hits
    assert [h.id for h in strong] == [high]


def test_the_setting_turns_the_weighing_on_and_episodes_are_not_weighed(
    client_factory: Callable[..., Client],
    test_settings: GraphmemSettings,
    graph: Graph,
    ns: str,
) -> None:
    plain = client_factory("sync", ns=ns)
    high, low = _twins(plain, graph)
    plain.ingest(["Ada's locker code is 4417."])
    query = "What is Ada's locker code?"
    weighed = client_factory(
        "async", ns=ns, settings=test_settings.model_copy(update={"recall_importance_weight": 1})
    )
    assert weighed.recall_config.importance_weight == 1.0
    before = plain.recall(query, track_access=False).hits
    after = weighed.recall(query, track_access=False).hits
    assert [h.id for h in after if h.kind == "fact"] == [high, low]
    assert [h.id for h in before if h.kind == "fact"] == [low, high]
    (episode_before,) = [h for h in before if h.kind == "episode"]
    (episode_after,) = [h for h in after if h.kind == "episode"]
    assert episode_after.score == pytest.approx(episode_before.score, rel=1e-6)  # recency moves
    assert episode_after.scores.importance is None
    # Turned off again for one call.
    off = weighed.recall(query, track_access=False, config={"importance_weight": 0})
    assert [h.id for h in off.hits] == [h.id for h in before]
    assert [h.score for h in off.hits] == pytest.approx([h.score for h in before], rel=1e-6)


# --- REST, the remote client, MCP and the CLI ----------------------------------------------------
def test_rest_and_the_remote_client_take_an_importance(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    api = f"{served.url}/v1/namespaces/{ns}"
    made = post(
        f"{api}/facts", json={"text": "Ada speaks Basque.", "importance": 0.6}, headers=bearer(key)
    )
    assert made.status_code == 201, made.text
    assert made.json()["importance"] == 0.6
    read = get(f"{api}/memories/{made.json()['id']}", headers=bearer(key))
    assert read.json()["importance"] == 0.6
    batch = post(
        f"{api}/facts/batch",
        json={"facts": [{"text": "Ada sings tenor.", "importance": 0.3}, {"text": "Ada rows."}]},
        headers=bearer(key),
    )
    assert [f.get("importance") for f in batch.json()] == [0.3, None]
    before = _stored(graph, ns)
    for bad in (1.5, -1, True, "0.5"):
        refused = post(
            f"{api}/facts", json={"text": "Ada sings bass.", "importance": bad}, headers=bearer(key)
        )
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["type"] == "InvalidInputError"
        assert "importance" in refused.json()["error"]["message"]
    assert _stored(graph, ns) == before
    found = post(
        f"{api}/search",
        json={"query": "What language does Ada speak?", "config": {"importance_weight": 0.5}},
        headers=bearer(key),
    ).json()
    assert found["hits"][0]["scores"]["importance"] == pytest.approx(0.6, abs=1e-3)

    with RemoteMemory(served.url, key.key, ns=ns) as remote:
        fact = remote.remember("Ada plays the oboe.", importance=0.45)
        assert fact.importance == 0.45
        assert remote.get(fact.id).model_dump()["importance"] == 0.45
        (many,) = remote.remember_many([{"text": "Ada knits.", "importance": 0.05}])
        assert many.importance == 0.05
        for bad in (1.5, float("nan"), True):
            with pytest.raises(InvalidInputError):
                remote.remember("Ada plays the drums.", importance=bad)
    assert "Ada plays the drums." not in [row["text"] for row in _stored(graph, ns)]


def test_the_mcp_tool_takes_an_importance(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    memory = AsyncMemory(test_settings, target=graph.target, embedder=embedder, ns=ns)
    server = build_server(memory, McpOptions(namespace=ns, full_ids=True))

    async def scenario() -> None:
        async with warm_memory(memory, server), McpClient(server) as client:
            added = await client.call_tool(
                "add_memory", {"text": "Ada's flat is on the fourth floor.", "importance": 0.8}
            )
            assert not added.is_error, added.content
            data = json.loads(added.content[0].text)  # type: ignore[union-attr]
            assert data["memory"]["importance"] == 0.8
            stored = await memory.get(data["memory"]["id"])
            assert stored.model_dump()["importance"] == 0.8
            for bad in (1.5, -0.5, True, "high"):
                refused = await client.call_tool(
                    "add_memory", {"text": "Ada's flat has a balcony.", "importance": bad}
                )
                assert refused.is_error, bad

    asyncio.run(scenario())
    assert [(row["text"], row["importance"]) for row in _stored(graph, ns)] == [
        ("Ada's flat is on the fourth floor.", 0.8)
    ]


def test_the_cli_takes_an_importance_and_a_recall_weight(graph: Graph, ns: str) -> None:
    env = cli_env(graph, ns)
    runner = CliRunner()
    made = runner.invoke(
        main, ["remember", "Ada drives a red van.", "--importance", "0.7", "--json"], env=env
    )
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["importance"] == 0.7
    for bad in ("1.5", "nan", "high"):
        refused = runner.invoke(
            main, ["remember", "Ada drives a bus.", "--importance", bad], env=env
        )
        assert refused.exit_code == 2, refused.output
    assert [(row["text"], row["importance"]) for row in _stored(graph, ns)] == [
        ("Ada drives a red van.", 0.7)
    ]
    found = runner.invoke(
        main, ["recall", "What does Ada drive?", "--importance-weight", "1", "--json"], env=env
    )
    assert found.exit_code == 0, found.output
    (hit,) = json.loads(found.stdout)["hits"]
    assert hit["scores"]["importance"] == pytest.approx(0.7, abs=1e-3)
    unweighed = runner.invoke(main, ["recall", "What does Ada drive?", "--json"], env=env)
    assert json.loads(unweighed.stdout)["hits"][0]["scores"]["importance"] is None
