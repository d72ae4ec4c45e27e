"""Namespaces as things to manage, against the real Neo4j: the listing, an export of a whole
history, an import that gives back the same document (into the same namespace after a drop,
and into another one whose ids clash), the refusals that write nothing, a killed import that
leaves nothing visible, and a drop that leaves no node of the namespace behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.errors import (
    ConfirmationRequiredError,
    ExportFormatError,
    ForgottenContentError,
    ImportEmbedderMismatchError,
    NamespaceNotEmptyError,
    NotFoundError,
)
from tests.helpers import SentenceExtractor, cli_env
from tests.integration.conftest import Client

Doc = list[dict[str, Any]]


def build_history(memory: Client, ns: str) -> dict[str, str]:
    """Every kind of node and relationship a namespace holds: an update, a merge by the
    heuristic consolidation, an open and a resolved contradiction, a reference, a retraction,
    a pin, messages with derived facts, access stamps, an erased fact and an erased message."""
    ids: dict[str, str] = {}
    acme = memory.remember(
        "Ada works at Acme.",
        source="hr",
        tags=["job"],
        valid_from=datetime.fromisoformat("2019-01-01T00:00:00+00:00"),
        metadata={"confidence": 0.9},
        ns=ns,
    )
    globex = memory.remember("Ada works at Globex.", supersedes=[acme.id], reason="moved", ns=ns)
    tea = memory.remember("Ada likes green tea.", ns=ns)
    memory.remember("Ada likes green tea.", ns=ns)  # the same words: the same text_hash
    run = memory.consolidate(ns=ns, force=True)  # the heuristic merges the two
    assert [a.op for a in run.applied] == ["MERGE"], run
    coffee = memory.remember("Ada hates tea.", contradicts=[tea.id], reason="said so", ns=ns)
    london = memory.remember("Ada lives in London.", ns=ns)
    paris = memory.remember("Ada lives in Paris.", contradicts=[london.id], ns=ns)
    memory.resolve(london.id, paris.id, keep=paris.id, reason="she moved", ns=ns)
    cat = memory.remember("Ada has a cat.", references=[tea.id], ns=ns)
    memory.retract(cat.id, reason="the neighbour's cat", ns=ns)
    memory.pin(globex.id, ns=ns)
    ingested = memory.ingest(
        [
            {"content": "I moved to Paris. I love it.", "external_id": "m1", "session_id": "s1"},
            {"content": "My phone is new.", "external_id": "m2", "session_id": "s2"},
        ],
        ns=ns,
    )
    phone = memory.remember("Ada's phone number is 555-0100.", ns=ns)
    memory.remember("Call Ada on her mobile.", references=[phone.id], ns=ns)
    memory.forget([phone.id], reason="erasure request", ns=ns)
    erased = memory.forget(session="s2", reason="erasure request", ns=ns)
    memory.recall("Where does Ada work?", k=2, ns=ns)
    ids.update(globex=globex.id, tea=tea.id, coffee=coffee.id, phone=phone.id, run=run.run_id)
    ids["erased_at"] = erased.at.isoformat()
    ids["episode"] = next(e.id for e in ingested.episodes if e.external_id == "m1")
    return ids


def exported(memory: Client, ns: str, **options: Any) -> Doc:
    """The records of an export, through either client."""
    raw: Any = memory.raw
    if memory.loop is None:
        return list(raw.export(ns, **options))

    async def collect() -> Doc:
        return [record async for record in await raw.export(ns, **options)]

    return memory.loop.run_until_complete(collect())


def comparable(doc: Doc) -> Doc:
    """A document without the times of the export itself."""
    return [{k: v for k, v in r.items() if k not in ("exported_at", "finished_at")} for r in doc]


def count(graph: Graph, where: str, **params: Any) -> int:
    rows, _, _ = graph.driver.execute_query(
        f"MATCH (n) WHERE {where} RETURN count(n) AS n", params, database_=graph.database
    )
    return int(rows[0]["n"])


def in_namespace(graph: Graph, ns: str) -> int:
    return count(graph, "n.ns = $ns", ns=ns)


def staged(graph: Graph, ns: str) -> int:
    return count(graph, "n.ns STARTS WITH $prefix", prefix=f"~import:{ns}:")


@pytest.fixture
def builder(client_factory: Callable[..., Client]) -> Client:
    """A sync client with an extractor, and the offline heuristic proposer."""
    return client_factory("sync", extractor=SentenceExtractor())


def test_the_export_holds_the_whole_history(builder: Client, ns: str) -> None:
    ids = build_history(builder, ns)
    doc = exported(builder, ns, page_size=3)  # small pages: the keyset paging is exercised
    header, end = doc[0], doc[-1]
    assert header["format"] == "graphmem-namespace" and header["version"] == 1
    assert header["ns"] == ns and header["embedder"]["dimension"] == 384
    assert end["record"] == "end" and not end["changed_during_export"]
    nodes = [r for r in doc if r["record"] == "node"]
    edges = [r for r in doc if r["record"] == "relationship"]
    assert end["nodes"] == {
        label: sum(1 for n in nodes if n["labels"] == [label]) for label in end["nodes"]
    }
    assert end["relationships"] == len(edges)
    assert set(end["nodes"]) == {
        "Fact",
        "Episode",
        "Tombstone",
        "ConsolidationRun",
        "ConsolidationState",
        "ConsolidationRecord",
        "ConsolidationChange",
    }
    assert {e["type"] for e in edges} >= {
        "SUPERSEDES",
        "CONTRADICTS",
        "REFERENCES",
        "MERGED_INTO",
        "DERIVED_FROM",
        "FLAGGED_BY",
        "RECORDED",
    }
    by_key = {n["key"]: n for n in nodes}
    globex = by_key[ids["globex"]]
    assert globex["properties"]["pinned"] is True and globex["types"]["embedding"] == "vector"
    assert globex["types"]["recorded_at"] == "datetime"
    assert by_key[ids["phone"]]["labels"] == ["Tombstone"]
    assert "text" not in by_key[ids["phone"]]["properties"]
    stamped = [n for n in nodes if n["properties"].get("access_count")]
    assert stamped and all("last_accessed_at" in n["types"] for n in stamped)
    resolved = [e for e in edges if e["type"] == "CONTRADICTS" and "resolved_at" in e["types"]]
    assert len(resolved) == 1 and resolved[0]["properties"]["kept"]
    assert len(set(map(json.dumps, doc))) == len(doc)  # no record twice across the pages
    assert comparable(exported(builder, ns, page_size=500)) == comparable(doc)


def test_export_drop_import_gives_the_same_document(
    memory: Client, builder: Client, graph: Graph, ns: str
) -> None:
    ids = build_history(builder, ns)
    before = exported(memory, ns)
    dropped = memory.drop_namespace(ns, confirm=True)
    assert dropped.nodes == before[-1]["nodes"]
    assert in_namespace(graph, ns) == 0
    result = memory.import_(before, ns=ns, batch_size=4)
    assert (
        result.nodes == before[-1]["nodes"] and result.relationships == before[-1]["relationships"]
    )
    assert result.remapped == {} and result.tombstones_match is True
    assert comparable(exported(memory, ns)) == comparable(before)
    # The memory reads as it did: ids, both clocks, the chain, the erasure.
    assert memory.get(ids["globex"], ns=ns).pinned
    assert memory.history(ids["globex"], ns=ns).head_id == ids["globex"]
    hits = memory.recall("Where does Ada work?", k=3, kinds=["fact"], ns=ns).hits
    assert ids["globex"] in [h.id for h in hits]
    with pytest.raises(ForgottenContentError):
        memory.remember("Ada's phone number is 555-0100.", ns=ns)


def test_an_import_into_another_namespace_remaps_the_ids_that_clash(
    builder: Client, graph: Graph, ns: str
) -> None:
    build_history(builder, ns)
    original = exported(builder, ns)
    copy = f"{ns}-copy"
    result = builder.import_(original, ns=copy, batch_size=5)
    ids = {
        n["key"]
        for n in original
        if n["record"] == "node" and n["labels"][0] in ("Fact", "Episode", "ConsolidationRun")
    }
    assert set(result.remapped) == ids and result.tombstones_match is False
    assert not set(result.remapped.values()) & ids
    text = json.dumps(comparable(original))
    for old, new in result.remapped.items():
        text = text.replace(old, new)
    expected = json.loads(text.replace(json.dumps(ns), json.dumps(copy)))
    got = comparable(exported(builder, copy))
    for doc in (expected, got):
        doc[0].pop("erasure_check")  # each namespace hashes erased words with its own key
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, expected))
    assert comparable(exported(builder, ns)) == comparable(original)  # the source untouched


def test_an_import_into_a_namespace_that_holds_anything_is_refused(
    builder: Client, graph: Graph, ns: str
) -> None:
    build_history(builder, ns)
    doc = exported(builder, ns)
    target = f"{ns}-busy"
    kept = builder.remember("Something already here.", ns=target)
    with pytest.raises(NamespaceNotEmptyError) as refused:
        builder.import_(doc, ns=target)
    assert refused.value.counts == {"Fact": 1} and "drop" in str(refused.value)
    assert in_namespace(graph, target) == 1 + count(
        graph, "n:GraphmemLock AND n.ns = $ns", ns=target
    )
    assert builder.get(kept.id, ns=target).text == "Something already here."
    assert staged(graph, target) == 0


def test_refused_documents_write_nothing(
    builder: Client,
    client_factory: Callable[..., Client],
    graph: Graph,
    ns: str,
) -> None:
    build_history(builder, ns)
    doc = exported(builder, ns)
    target = f"{ns}-refused"
    header = doc[0]
    cases: list[tuple[Doc, type[Exception], str]] = [
        ([{**header, "version": 2}, *doc[1:]], ExportFormatError, "version 2"),
        ([{**header, "format": "other"}, *doc[1:]], ExportFormatError, "format"),
        (doc[1:], ExportFormatError, "header"),
        ([], ExportFormatError, "no records"),
        (doc[:-1], ExportFormatError, "cut short"),
        (doc[:5] + doc[-1:], ExportFormatError, "announces"),
        ([*doc, doc[-1]], ExportFormatError, "after the end"),
        ([header, doc[1], doc[1], *doc[2:]], ExportFormatError, "twice"),
    ]
    dangling = next(r for r in doc if r["record"] == "relationship")
    ghost = {**dangling, "end": {**dangling["end"], "key": str(uuid.uuid4())}}
    cases.append(([*doc[:-1], ghost, doc[-1]], ExportFormatError, "does not hold"))
    for records, error, words in cases:
        with pytest.raises(error, match=words):
            builder.import_(records, ns=target, batch_size=7)
        assert in_namespace(graph, target) == count(
            graph, "n:GraphmemLock AND n.ns = $ns", ns=target
        )
        assert staged(graph, target) == 0
    other = {**header, "embedder": {"model": "another/model", "dimension": 768}}
    with pytest.raises(ImportEmbedderMismatchError, match="another/model"):
        builder.import_([other, *doc[1:]], ns=target)
    assert staged(graph, target) == 0 and builder.stats(ns=target).facts == 0


def test_a_killed_import_leaves_nothing_visible_and_a_rerun_works(
    builder: Client, graph: Graph, embedder: Embedder, ns: str, tmp_path: Path
) -> None:
    build_history(builder, ns)
    doc = exported(builder, ns)
    file = tmp_path / "export.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in doc), encoding="utf-8")
    builder.drop_namespace(ns, confirm=True)
    env = {
        **os.environ,
        **cli_env(graph, ns),
        "KILL_DIMENSION": str(embedder.dimension),
        "KILL_MODEL_ID": embedder.model_id,
        "IMPORT_FILE": str(file),
        "BATCH": "3",
    }
    child = Path(__file__).with_name("import_child.py")
    fact = next(r["key"] for r in doc if r["record"] == "node" and r["labels"] == ["Fact"])
    # Killed while staging nodes, while staging relationships, and just before the last
    # transaction commits.
    for query, at in (("import_nodes", 3), ("import_edges", 2), ("import_flip", 1)):
        out = subprocess.run(
            [sys.executable, str(child)],
            env={**env, "KILL_QUERY": query, "KILL_AT": str(at)},
            capture_output=True,
            text=True,
            timeout=180,
            cwd=Path(__file__).parents[2],
        )
        assert out.returncode == -9, out.stderr[-2000:]
        assert staged(graph, ns) > 0
        stats = builder.stats(ns=ns)
        assert (stats.facts, stats.episodes, stats.forgotten_facts) == (0, 0, 0)
        assert not builder.recall("Where does Ada work?", ns=ns).hits
        with pytest.raises(NotFoundError):
            builder.get(fact, ns=ns)
        listed = {s.ns: s for s in builder.namespaces()}
        assert listed[ns].import_pending > 0 and listed[ns].facts == 0
    result = builder.import_(doc, ns=ns)
    assert result.stale_removed > 0 and staged(graph, ns) == 0
    assert comparable(exported(builder, ns)) == comparable(doc)


def test_drop_removes_every_node_of_the_namespace_and_nothing_else(
    builder: Client, graph: Graph, ns: str
) -> None:
    build_history(builder, ns)
    other = f"{ns}-other"
    build_history(builder, other)
    kept = comparable(exported(builder, other))
    with pytest.raises(ConfirmationRequiredError):
        builder.drop_namespace(ns)
    preview = builder.drop_namespace(ns, dry_run=True)
    assert preview.dry_run and preview.nodes["Fact"] > 0 and in_namespace(graph, ns) > 0
    done: list[int] = []
    result = builder.drop_namespace(ns, confirm=True, batch_size=4, progress=done.append)
    assert result.nodes == preview.nodes and sum(done) == sum(result.nodes.values())
    assert result.batches > 1 and result.locks > 0
    assert in_namespace(graph, ns) == 0
    assert comparable(exported(builder, other)) == kept
    assert ns not in {s.ns for s in builder.namespaces()}
    again = builder.drop_namespace(ns, confirm=True)
    assert again.removed == 0 and again.locks == 0


def test_the_listing_shows_each_namespace_with_its_counts_and_last_write(
    memory: Client, builder: Client, ns: str
) -> None:
    ids = build_history(builder, ns)
    listed = {s.ns: s for s in memory.namespaces()}
    summary = listed[ns]
    stats = memory.stats(ns=ns)
    assert summary.facts == stats.facts and summary.facts_by_status == stats.facts_by_status
    assert summary.facts_believed == stats.facts_by_status["active"]
    assert summary.episodes == stats.episodes
    # The erased fact, and the erased message with the fact derived only from it.
    assert (summary.forgotten_facts, summary.forgotten_episodes) == (2, 1)
    assert (stats.forgotten_facts, stats.forgotten_episodes) == (2, 1)
    assert summary.consolidation_runs == 1 and summary.import_pending == 0
    # The last write is the last erasure (recall's access stamps are reads).
    assert summary.last_write_at == datetime.fromisoformat(ids["erased_at"])
    names = [s.ns for s in memory.namespaces()]
    assert names == sorted(names)


_EXACT = """
MATCH (f:Fact {ns: $ns, id: $id})
RETURN [k IN keys(f) WHERE k <> 'ns' |
        [k, valueType(f[k]),
         CASE WHEN valueType(f[k]) STARTS WITH 'LIST' THEN [x IN f[k] | toString(x)]
              ELSE toString(f[k]) END]] AS values
"""


def test_every_value_comes_back_with_its_type_exactly(
    builder: Client, graph: Graph, ns: str
) -> None:
    fact = builder.remember("Ada keeps odd values.", tags=["a", "b"], importance=0.25, ns=ns)
    graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns, id: $id}) "
        "SET f.valid_from = datetime('2026-01-01T10:00:00.123456789+01:00[Europe/Paris]'), "
        "f.valid_to = datetime('2026-01-01T10:00:00.5-03:30'), f.last_accessed_at = datetime("
        "'2026-01-01T10:00:00Z[UTC]'), f.access_count = 3, f.importance = 3.0, "
        "f.pinned = true",
        ns=ns,
        id=fact.id,
        database_=graph.database,
    )

    def values() -> list[Any]:
        rows, _, _ = graph.driver.execute_query(_EXACT, ns=ns, id=fact.id, database_=graph.database)
        return sorted(rows[0]["values"])

    before = values()
    vector, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns, id: $id}) RETURN f.embedding AS v", ns=ns, id=fact.id
    )
    doc = exported(builder, ns)
    types = next(r for r in doc if r["record"] == "node" and r["key"] == fact.id)["types"]
    assert types["valid_from"] == "datetime" and types["embedding"] == "vector"
    assert "access_count" not in types and "importance" not in types
    builder.drop_namespace(ns, confirm=True)
    builder.import_(doc, ns=ns)
    assert values() == before
    again, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns, id: $id}) RETURN f.embedding AS v", ns=ns, id=fact.id
    )
    assert again[0]["v"] == vector[0]["v"]
    assert comparable(exported(builder, ns)) == comparable(doc)
