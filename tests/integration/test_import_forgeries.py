"""Forged namespace imports against the real Neo4j, through a real `graphmem serve` (the body
streamed) and through `graphmem import`: a key node, a key label on a fact, a migration record,
an unknown label, an extra property, a 5 MB text, a wrong-dimension embedding, a malformed
episode and relationships to another namespace's ids are each refused, naming the record,
with nothing written and nothing left staged; staging an earlier import left behind, whatever
its labels, is removed by the next import and by a drop; a real export still goes back."""

from __future__ import annotations

import base64
import copy
import json
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.models import Fact
from tests.helpers import cli_env
from tests.service import Served, bearer, new_key

Doc = list[dict[str, Any]]
NOW = "2026-01-01T00:00:00Z"


def _count(graph: Graph, query: str, **params: Any) -> int:
    rows, _, _ = graph.driver.execute_query(query, params, database_=graph.database)
    return int(rows[0]["n"])


def _footprint(graph: Graph, target: str) -> dict[str, int]:
    """What a refused import must leave as it was."""
    return {
        "target": _count(
            graph,
            "MATCH (n) WHERE n.ns = $ns AND NOT n:GraphmemLock RETURN count(n) AS n",
            ns=target,
        ),
        "staged": _count(graph, "MATCH (n) WHERE n.ns STARTS WITH '~import:' RETURN count(n) AS n"),
        "keys": _count(graph, "MATCH (k:GraphmemApiKey) RETURN count(k) AS n"),
        "migrations": _count(graph, "MATCH (m:GraphmemMigration) RETURN count(m) AS n"),
        "schema": _count(graph, "MATCH (s:GraphmemSchema) RETURN count(s) AS n"),
        "relationships": _count(graph, "MATCH ()-[r]->() RETURN count(r) AS n"),
        "nodes": _count(graph, "MATCH (n) WHERE NOT n:GraphmemLock RETURN count(n) AS n"),
    }


@pytest.fixture
def source(admin: Memory, ns: str) -> tuple[Doc, str]:
    """A small real history (an update, a message with a fact derived from it, an erasure)
    exported, and the id of a fact of another namespace."""
    old = admin.remember("Ada works at Acme.", ns=ns)
    admin.remember("Ada works at Globex.", supersedes=[old.id], reason="moved", ns=ns)
    admin.ingest([{"content": "I moved to Paris.", "external_id": "m1"}], ns=ns)
    gone = admin.remember("Ada's code is 1373.", ns=ns)
    admin.forget([gone.id], reason="request", ns=ns)
    victim = admin.remember("Bob's private fact.", ns=f"{ns}-victim")
    return list(admin.export(ns)), victim.id


def _nodes(doc: Doc, label: str) -> list[dict[str, Any]]:
    return [r for r in doc if r["record"] == "node" and r["labels"] == [label]]


def _before_end(doc: Doc, record: dict[str, Any]) -> Doc:
    first_edge = next(i for i, r in enumerate(doc) if r["record"] != "node" and i > 0)
    return [*doc[:first_edge], record, *doc[first_edge:]]


def _forged_fact(doc: Doc, change: Callable[[dict[str, Any]], None]) -> Doc:
    forged = copy.deepcopy(doc)
    change(_nodes(forged, "Fact")[0])
    return forged


def _key_node() -> dict[str, Any]:
    key = str(uuid.uuid4())
    return {
        "record": "node",
        "labels": ["GraphmemApiKey"],
        "key": key,
        "properties": {
            "id": key,
            "name": "root",
            "hash": "ab" * 32,
            "role": "admin",
            "prefix": "",
            "created_at": NOW,
        },
        "types": {"created_at": "datetime"},
    }


def _fact_as_key(fact: dict[str, Any]) -> None:
    fact["labels"] = ["Fact", "GraphmemApiKey"]
    fact["properties"].update(name="root", hash="ab" * 32, role="admin", prefix="")


def _vector(n: int) -> str:
    return base64.b64encode(bytes(4 * n)).decode()


def _malformed_episode(doc: Doc) -> Doc:
    forged = copy.deepcopy(doc)
    _nodes(forged, "Episode")[0]["properties"]["content"] = ["not", "a", "text"]
    return forged


def _to_other_namespace(doc: Doc, victim: str) -> Doc:
    forged = copy.deepcopy(doc)
    edge = next(r for r in forged if r["record"] == "relationship" and r["type"] == "SUPERSEDES")
    edge["end"]["key"] = victim
    return forged


def forgeries(doc: Doc, victim: str) -> dict[str, tuple[Doc, str]]:
    migration = {
        "record": "node",
        "labels": ["GraphmemMigration"],
        "key": "999",
        "properties": {"version": 999, "name": "lockout", "applied_at": NOW},
        "types": {"applied_at": "datetime"},
    }
    person = {**_nodes(doc, "Fact")[0], "labels": ["Person"]}
    return {
        "key node": (_before_end(doc, _key_node()), "not one label"),
        "key label on a fact": (_forged_fact(doc, _fact_as_key), "not one label"),
        "migration record": (_before_end(doc, migration), "not one label"),
        "unknown label": (_before_end(doc, person), "not one label"),
        "extra property": (
            _forged_fact(doc, lambda f: f["properties"].update(role="admin")),
            "'role' is not one",
        ),
        "5 MB text": (
            _forged_fact(doc, lambda f: f["properties"].update(text="x" * 5_000_000)),
            "5,000,000 characters",
        ),
        "wrong-dimension embedding": (
            _forged_fact(doc, lambda f: f["properties"].update(embedding=_vector(3))),
            "has 3 values",
        ),
        "malformed episode": (_malformed_episode(doc), "'content' of Episode is not a text"),
        "relationship to another namespace": (_to_other_namespace(doc, victim), "does not hold"),
    }


def _body(doc: Doc) -> Iterator[bytes]:
    """The document as a streamed body (no Content-Length), a record a chunk."""
    for record in doc:
        yield (json.dumps(record) + "\n").encode()


def test_each_forged_import_through_rest_is_refused_and_leaves_nothing(
    served: Served, admin: Memory, graph: Graph, source: tuple[Doc, str], ns: str
) -> None:
    doc, victim = source
    owner = new_key(admin, "admin", namespaces=[f"{ns}-into"])
    url = f"{served.url}/v1/namespaces/{ns}-into/import"
    before = _footprint(graph, f"{ns}-into")
    for name, (forged, words) in forgeries(doc, victim).items():
        answer = httpx.post(url, content=_body(forged), headers=bearer(owner), timeout=120)
        assert answer.status_code == 422, (name, answer.text)
        error = answer.json()["error"]
        assert error["type"] == "ExportFormatError", (name, error)
        assert words in error["message"] and "record " in error["message"], (name, error)
        assert _footprint(graph, f"{ns}-into") == before, name
    kept = admin.get(victim, ns=f"{ns}-victim")
    assert isinstance(kept, Fact) and kept.text == "Bob's private fact."
    # The real export goes in, streamed, and comes back the same.
    done = httpx.post(url, content=_body(doc), headers=bearer(owner), timeout=120)
    assert done.status_code == 201, done.text
    assert _footprint(graph, f"{ns}-into")["staged"] == 0
    again = list(admin.export(f"{ns}-into"))
    assert len(again) == len(doc) and again[-1]["nodes"] == doc[-1]["nodes"]


def test_a_bad_header_is_refused_before_the_body_is_read(
    served: Served, admin: Memory, source: tuple[Doc, str], ns: str
) -> None:
    """The body is sent chunked and never finished: the answer comes from its first line."""
    doc, _ = source
    owner = new_key(admin, "admin", namespaces=[f"{ns}-into"])
    line = (json.dumps({**doc[0], "format": "other"}) + "\n").encode()
    head = (
        f"POST /v1/namespaces/{ns}-into/import HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {owner.key}\r\nContent-Type: application/x-ndjson\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", served.port), timeout=120) as connection:
        connection.sendall(head + f"{len(line):x}\r\n".encode() + line + b"\r\n")
        answer = b""
        while b"ExportFormatError" not in answer and (more := connection.recv(65536)):
            answer += more
    status, _, rest = answer.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 422"), answer
    assert b"ExportFormatError" in rest and b"format" in rest


def test_each_forged_import_through_the_cli_is_refused_and_leaves_nothing(
    graph: Graph,
    embedder: Embedder,
    source: tuple[Doc, str],
    ns: str,
    tmp_path: Path,
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    doc, victim = source
    target = f"{ns}-cli"
    env = cli_env(graph, target)
    before = _footprint(graph, target)
    for name, (forged, words) in forgeries(doc, victim).items():
        file = tmp_path / "forged.jsonl"
        file.write_text("".join(json.dumps(r) + "\n" for r in forged), encoding="utf-8")
        result = CliRunner().invoke(main, ["import", str(file), "--json"], env=env)
        assert result.exit_code == 1, (name, result.output)
        error = json.loads(result.stderr)["error"]
        assert error["type"] == "ExportFormatError" and words in error["message"], (name, error)
        assert _footprint(graph, target) == before, name
    file = tmp_path / "real.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in doc), encoding="utf-8")
    result = CliRunner().invoke(main, ["import", str(file), "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert _footprint(graph, target)["staged"] == 0


def _stage_forged(graph: Graph, target: str) -> None:
    """What an import that failed before imports were checked could leave: staged nodes, one
    carrying only a key's label (which the labelled clean-up queries never see)."""
    stage = f"~import:{target}:{uuid.uuid4().hex}"
    graph.driver.execute_query(
        "CREATE (:GraphmemApiKey {ns: $stage, id: $id, role: 'admin', prefix: ''}) "
        "CREATE (:Fact {ns: $stage, id: $fact, text: 'staged'})",
        stage=stage,
        id=str(uuid.uuid4()),
        fact=str(uuid.uuid4()),
        database_=graph.database,
    )


def test_forged_staging_is_removed_by_the_next_import_and_by_a_drop(
    admin: Memory, graph: Graph, source: tuple[Doc, str], ns: str
) -> None:
    doc, _ = source
    keys = _count(graph, "MATCH (k:GraphmemApiKey) RETURN count(k) AS n")
    target = f"{ns}-stale"
    _stage_forged(graph, target)
    result = admin.import_(doc, ns=target)
    assert result.stale_removed == 2
    assert _footprint(graph, target)["staged"] == 0
    assert _count(graph, "MATCH (k:GraphmemApiKey) RETURN count(k) AS n") == keys
    _stage_forged(graph, target)
    dropped = admin.drop_namespace(target, confirm=True)
    assert dropped.staged == 2 and _footprint(graph, target)["staged"] == 0
    assert _count(graph, "MATCH (k:GraphmemApiKey) RETURN count(k) AS n") == keys
