"""The import contract (graphmem.core.namespaces.contract), in pure Python: what graphmem's
own export writes passes, and each kind of forged or malformed record is refused with the
record's number, before anything could be staged. Also the streamed import body of the
service: the header is checked before the rest is read, and a line is bounded."""

from __future__ import annotations

import asyncio
import base64
import copy
from collections.abc import AsyncIterator, Callable
from typing import Any

import numpy as np
import pytest

from graphmem.core.namespaces.contract import (
    EDGES,
    MAX_BATCH_BYTES,
    MAX_RECORD_BYTES,
    NODES,
    Contract,
    weight,
)
from graphmem.core.namespaces.records import read_header
from graphmem.errors import ExportFormatError
from graphmem.service.import_body import streamed_records

NS = "user-42"
DIM = 8
FACT = "11111111-1111-4111-8111-111111111111"
OTHER = "22222222-2222-4222-8222-222222222222"
EPISODE = "33333333-3333-4333-8333-333333333333"
ERASED = "44444444-4444-4444-8444-444444444444"
RUN = "55555555-5555-4555-8555-555555555555"
T = "2026-01-01T10:00:00.123Z"


def vector(n: int = DIM) -> str:
    return base64.b64encode(np.arange(n, dtype="<f4").tobytes()).decode()


def node(label: str, key: str, properties: dict[str, Any], times: tuple[str, ...] = ()) -> Any:
    types = {k: "datetime" for k in times}
    if "embedding" in properties:
        types["embedding"] = "vector"
    record = {"record": "node", "labels": [label], "key": key, "properties": properties}
    if types:
        record["types"] = types
    return record


def fact(id_: str = FACT, **extra: Any) -> Any:
    properties = {
        "id": id_,
        "ns": NS,
        "text": "Ada works at Acme.",
        "text_hash": "ab" * 32,
        "status": "active",
        "recorded_at": T,
        "embedding": vector(),
        "tags": ["job"],
        "metadata": '{"confidence": 0.9}',
        "pinned": True,
        "importance": 0.5,
        "access_count": 2,
        **extra,
    }
    times = tuple(k for k in properties if k.endswith("_at") or k.startswith("valid_"))
    return node("Fact", id_, properties, times)


def episode(**extra: Any) -> Any:
    properties = {
        "id": EPISODE,
        "ns": NS,
        "content": "I moved to Paris.",
        "content_hash": "cd" * 32,
        "role": "user",
        "recorded_at": T,
        "occurred_at": T,
        "embedding": vector(),
        **extra,
    }
    return node("Episode", EPISODE, properties, ("recorded_at", "occurred_at"))


def edge(kind: str, start: tuple[str, str], end: tuple[str, str], **properties: Any) -> Any:
    record = {
        "record": "relationship",
        "type": kind,
        "start": {"labels": [start[0]], "key": start[1]},
        "end": {"labels": [end[0]], "key": end[1]},
        "properties": {"at": T, "actor": "api", **properties},
        "types": {"at": "datetime"},
    }
    if kind == "RECORDED":
        record["properties"], record["types"] = {}, {}
    return record


def valid_nodes() -> list[Any]:
    record_key = f"record:{RUN}:1,2,"
    return [
        fact(),
        fact(OTHER, status="superseded", retired_at=T, superseded_by=FACT),
        episode(),
        node(
            "Tombstone",
            ERASED,
            {
                "ns": NS,
                "kind": "fact",
                "fact_id": ERASED,
                "text_hash": "ef" * 32,
                "at": T,
                "reason": "erasure request",
                "actor": "api",
                "erasure": RUN,
            },
            ("at",),
        ),
        node(
            "ConsolidationRun",
            RUN,
            {"id": RUN, "ns": NS, "started_at": T, "status": "finished", "timings": "{}"},
            ("started_at",),
        ),
        node("ConsolidationState", "state", {"ns": NS, "recent": [FACT], "failures": []}),
        node(
            "ConsolidationRecord",
            record_key,
            {
                "ns": NS,
                "run": RUN,
                "at": T,
                "clusters": [1, 2],
                "plans": ['{"cluster": 1}'],
                "facts": [FACT],
            },
            ("at",),
        ),
        node(
            "ConsolidationChange",
            f"change:{RUN}:1:{FACT}",
            {"ns": NS, "run": RUN, "cluster": 1, "fact_id": FACT, "at": T, "before_pinned": False},
            ("at",),
        ),
    ]


def valid_edges() -> list[Any]:
    return [
        edge("SUPERSEDES", ("Fact", FACT), ("Fact", OTHER), reason="moved"),
        edge("DERIVED_FROM", ("Fact", FACT), ("Episode", EPISODE)),
        edge("REFERENCES", ("Fact", FACT), ("Tombstone", ERASED)),
        edge(
            "FLAGGED_BY",
            ("Fact", FACT),
            ("Tombstone", ERASED),
            ns=NS,
            event="forgotten",
            relation="references",
        ),
        edge("RECORDED", ("ConsolidationRun", RUN), ("ConsolidationRecord", f"record:{RUN}:1,2,")),
    ]


def check(nodes: list[Any], edges: list[Any] = ()) -> Contract:  # type: ignore[assignment]
    contract = Contract(NS, DIM)
    for line, record in enumerate(nodes, start=2):
        contract.node(record, line)
    for line, record in enumerate(edges, start=2 + len(nodes)):
        contract.edge(record, line)
    return contract


def test_what_the_export_writes_passes() -> None:
    contract = check(valid_nodes(), valid_edges())
    assert FACT in contract.seen["Fact"] and "state" in contract.seen["ConsolidationState"]


def test_the_table_names_only_graphmem_labels_and_types() -> None:
    assert set(NODES) == {
        "Fact",
        "Episode",
        "Tombstone",
        "ConsolidationRun",
        "ConsolidationState",
        "ConsolidationRecord",
        "ConsolidationChange",
    }
    assert not any(label.startswith("Graphmem") for label in NODES)
    assert "RECORDED" in EDGES and EDGES["RECORDED"].starts == {"ConsolidationRun"}


Forge = Callable[[Any], None]


def _set(path: str, value: Any) -> Forge:
    def forge(record: Any) -> None:
        *parents, last = path.split(".")
        target = record
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value

    return forge


def _drop(key: str) -> Forge:
    return lambda record: record["properties"].pop(key)


NODE_FORGERIES: list[tuple[str, int, Forge, str]] = [
    ("key node", 0, _set("labels", ["GraphmemApiKey"]), "not one label"),
    ("key label on a fact", 0, _set("labels", ["Fact", "GraphmemApiKey"]), "not one label"),
    ("migration", 0, _set("labels", ["GraphmemMigration"]), "not one label"),
    ("schema", 0, _set("labels", ["GraphmemSchema"]), "not one label"),
    ("lock", 0, _set("labels", ["GraphmemLock"]), "not one label"),
    ("unknown label", 0, _set("labels", ["Person"]), "not one label"),
    ("no label", 0, _set("labels", []), "not one label"),
    ("extra property", 0, _set("properties.role", "admin"), "'role' is not one"),
    ("hash on a fact", 0, _set("properties.hash", "ab" * 32), "'hash' is not one"),
    ("5 MB text", 0, _set("properties.text", "x" * 5_000_000), "5,000,000 characters"),
    ("text over the limit", 0, _set("properties.text", "x" * 10_001), "10,001 characters"),
    ("wrong dimension", 0, _set("properties.embedding", vector(3)), "has 3 values"),
    ("not a vector", 0, _set("properties.embedding", "%%%"), "not a valid vector"),
    ("untyped embedding", 0, _set("types.embedding", "bytes"), "typed 'bytes'"),
    ("untyped time", 0, _set("types", {"embedding": "vector"}), "typed None"),
    ("type of nothing", 0, _set("types.ghost", "datetime"), "types names"),
    ("a time as a number", 0, _set("properties.recorded_at", 5), "is not a time"),
    ("malformed id", 0, _set("properties.id", "not-an-id"), "is not an id"),
    ("tags as a text", 0, _set("properties.tags", "x"), "not a list"),
    ("too many tags", 0, _set("properties.tags", [str(i) for i in range(33)]), "33 items"),
    ("metadata not JSON", 0, _set("properties.metadata", "{"), "not valid JSON"),
    ("bad status", 0, _set("properties.status", "root"), "not one of"),
    ("count as true", 0, _set("properties.access_count", True), "whole number"),
    ("another namespace", 0, _set("properties.ns", "user-43"), "export's namespace"),
    ("key not its id", 0, _set("key", OTHER), "not the one its properties give"),
    ("no text", 0, _drop("text"), "lacks text"),
    ("extra field", 0, _set("extra", 1), "fields an export does not write"),
    ("episode content as a list", 2, _set("properties.content", ["a"]), "is not a text"),
    ("episode without content", 2, _drop("content"), "lacks content"),
    ("episode role as a number", 2, _set("properties.role", 3), "is not a short text"),
    ("episode too long", 2, _set("properties.content", "x" * 100_001), "100,001"),
    ("tombstone of both", 3, _set("properties.episode_id", EPISODE), "not the one"),
    ("tombstone kind", 3, _set("properties.kind", "episode"), "kind does not match"),
    ("run with a key hash", 4, _set("properties.hash", "x"), "'hash' is not one"),
    ("record plans", 6, _set("properties.plans", "{}"), "not a list of JSON"),
    ("change kind", 7, _set("properties.kind", "admin"), "not one of"),
]


@pytest.mark.parametrize(
    ("index", "forge", "words"),
    [pytest.param(i, f, w, id=name) for name, i, f, w in NODE_FORGERIES],
)
def test_a_forged_or_malformed_node_is_refused_naming_its_record(
    index: int, forge: Forge, words: str
) -> None:
    nodes = valid_nodes()
    forge(nodes[index])
    with pytest.raises(ExportFormatError, match=words) as refused:
        check(nodes)
    assert refused.value.line == 2 + index


def test_the_largest_values_graphmem_writes_pass() -> None:
    nodes = valid_nodes()
    nodes[0]["properties"]["text"] = "x" * 10_000
    nodes[2]["properties"]["content"] = "x" * 100_000
    check(nodes)


def test_a_node_named_twice_is_refused() -> None:
    nodes = valid_nodes()
    with pytest.raises(ExportFormatError, match="twice") as refused:
        check([*nodes, copy.deepcopy(nodes[0])])
    assert refused.value.line == 2 + len(nodes)


EDGE_FORGERIES: list[tuple[str, int, Forge, str]] = [
    ("unknown type", 0, _set("type", "OWNS"), "'OWNS' is not one"),
    ("to another namespace's id", 0, _set("end.key", "9" * 8 + FACT[8:]), "does not hold"),
    ("to a key node", 0, _set("end.labels", ["GraphmemApiKey"]), "not one label"),
    ("two labels on an end", 0, _set("start.labels", ["Fact", "GraphmemApiKey"]), "not one"),
    ("wrong end label", 1, _set("end", {"labels": ["Fact"], "key": OTHER}), "cannot end"),
    ("recorded from a fact", 4, _set("start", {"labels": ["Fact"], "key": FACT}), "cannot start"),
    ("extra property", 0, _set("properties.role", "admin"), "'role' is not one"),
    ("untyped time", 0, _set("types", {}), "typed None"),
    ("5 MB reason", 0, _set("properties.reason", "x" * 5_000_000), "5,000,000"),
    ("flag of another ns", 3, _set("properties.ns", "user-43"), "export's namespace"),
    ("extra field", 0, _set("owner", "x"), "fields an export does not write"),
]


@pytest.mark.parametrize(
    ("index", "forge", "words"),
    [pytest.param(i, f, w, id=name) for name, i, f, w in EDGE_FORGERIES],
)
def test_a_forged_or_malformed_relationship_is_refused_naming_its_record(
    index: int, forge: Forge, words: str
) -> None:
    edges = valid_edges()
    forge(edges[index])
    with pytest.raises(ExportFormatError, match=words) as refused:
        check(valid_nodes(), edges)
    assert refused.value.line == 2 + len(valid_nodes()) + index


def test_a_relationship_to_a_node_that_comes_later_is_refused() -> None:
    nodes = valid_nodes()
    with pytest.raises(ExportFormatError, match="does not hold"):
        check(nodes[:1], [edge("SUPERSEDES", ("Fact", FACT), ("Fact", OTHER))])


HEADER = {
    "record": "header",
    "format": "graphmem-namespace",
    "version": 1,
    "graphmem": "0.1.0",
    "ns": NS,
    "embedder": {"model": "m", "dimension": DIM},
    "exported_at": T,
    "consistency": "page",
    "erasure_check": None,
}


def test_a_header_with_fields_an_export_does_not_write_is_refused() -> None:
    assert read_header(HEADER).ns == NS
    with pytest.raises(ExportFormatError, match="fields an export does not write"):
        read_header({**HEADER, "labels": ["GraphmemApiKey"]})


async def _chunks(parts: list[bytes], pulled: list[int]) -> AsyncIterator[bytes]:
    for part in parts:
        pulled.append(len(part))
        yield part


def _read(parts: list[bytes]) -> tuple[list[Any], list[int]]:
    pulled: list[int] = []

    async def run() -> list[Any]:
        async with streamed_records(_chunks(parts, pulled)) as records:
            return list(records)

    return asyncio.run(run()), pulled


def test_the_body_is_read_in_chunks_and_split_into_records() -> None:
    import json

    lines = [json.dumps(HEADER), json.dumps(valid_nodes()[0]), json.dumps({"record": "end"})]
    body = ("\n".join(lines) + "\n").encode()
    parts = [body[i : i + 7] for i in range(0, len(body), 7)]
    records, pulled = _read(parts)
    assert records[0] == HEADER and records[1] == valid_nodes()[0] and len(records) == 3
    assert len(pulled) == len(parts)


def test_a_bad_header_is_refused_before_the_rest_of_the_body_is_read() -> None:
    import json

    parts = [json.dumps({**HEADER, "format": "other"}).encode() + b"\n", b"x" * 100, b"y"]
    with pytest.raises(ExportFormatError, match="format"):
        _read(parts)
    pulled: list[int] = []

    async def run() -> None:
        async with streamed_records(_chunks(parts, pulled)):
            pass

    with pytest.raises(ExportFormatError):
        asyncio.run(run())
    assert len(pulled) == 1


def test_a_line_over_the_bound_is_refused_as_it_streams() -> None:
    import json

    chunk = b"z" * (1024 * 1024)
    parts = [json.dumps(HEADER).encode() + b"\n", *[chunk] * (MAX_RECORD_BYTES // len(chunk) + 2)]
    pulled: list[int] = []

    async def run() -> None:
        async with streamed_records(_chunks(parts, pulled)):
            pass

    with pytest.raises(ExportFormatError, match="over") as refused:
        asyncio.run(run())
    assert refused.value.line == 2 and len(pulled) < len(parts)


def test_a_batch_is_bounded_by_what_its_records_hold() -> None:
    big = fact(text="x" * 10_000)
    assert 10_000 < weight(big["properties"]) < 12_000
    plans = {"plans": ["x" * (3 * 1024 * 1024)]}
    # Three records of the largest plans graphmem writes fill a batch, whatever its count.
    assert 2 * weight(plans) < MAX_BATCH_BYTES < 3 * weight(plans)
