"""The namespace export format and the plans around it, without a database: values written so
that they come back exactly, the id map an import applies, the records checked, the listing
read, and the refusals that come before anything is read or written."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphmem.core.memory_core import MemoryCore
from graphmem.core.namespaces.document import (
    NAMESPACE_LABELS,
    format_type,
    in_label_order,
    label_of,
    plain_value,
    read_value,
    read_vector,
    remapped,
    written_properties,
)
from graphmem.core.namespaces.drop import LOCK_KINDS
from graphmem.core.namespaces.export import SECTIONS
from graphmem.core.namespaces.importer import check_embedder
from graphmem.core.namespaces.listing import stage_name, stage_target, summaries
from graphmem.core.namespaces.records import (
    edge_records,
    erasure_check,
    read_header,
    record_kind,
)
from graphmem.core.plans import Transaction
from graphmem.errors import (
    ConfirmationRequiredError,
    ExportFormatError,
    ImportEmbedderMismatchError,
    InvalidInputError,
)
from graphmem.store.cypher import QUERY_DIR

HEADER = {
    "record": "header",
    "format": "graphmem-namespace",
    "version": 1,
    "ns": "user-42",
    "embedder": {"model": "m", "dimension": 3},
}


def test_plain_values_stay_as_they_are_and_others_get_a_type() -> None:
    assert plain_value("text", "as said", "n") == ("as said", None)
    assert plain_value("count", 3, "n") == (3, None)
    assert plain_value("pinned", False, "n") == (False, None)
    assert plain_value("score", 0.25, "n") == (0.25, None)
    assert plain_value("tags", ["a", "b"], "n") == (["a", "b"], None)
    assert plain_value("score", math.nan, "n") == ("NaN", "float")
    assert plain_value("score", -math.inf, "n") == ("-Infinity", "float")
    assert plain_value("blob", b"\x00\x01", "n") == ("AAE=", "bytes")
    with pytest.raises(ExportFormatError, match="cannot write"):
        plain_value("nested", [[1]], "n")


def test_an_embedding_is_a_vector_of_float32_that_comes_back_exactly() -> None:
    vector = [float(v) for v in np.random.default_rng(1).standard_normal(384).astype(np.float32)]
    text, kind = plain_value("embedding", vector, "n")
    assert kind == "vector" and isinstance(text, str)
    assert read_vector("embedding", text) == vector
    # A list of doubles that float32 cannot hold stays a plain list, exact as JSON.
    doubles = [0.1, 0.2]
    assert plain_value("embedding", doubles, "n") == (doubles, None)
    with pytest.raises(ExportFormatError, match="vector"):
        read_vector("embedding", "not base64!")


def test_cypher_types_are_named_and_points_refused() -> None:
    assert format_type("ZONED DATETIME NOT NULL", "n") == "datetime"
    assert format_type("LOCAL DATETIME", "n") == "localdatetime"
    assert format_type("LIST<DATE NOT NULL> NOT NULL", "n") == "list<date>"
    assert format_type("DURATION NOT NULL", "n") == "duration"
    with pytest.raises(ExportFormatError, match="POINT"):
        format_type("POINT NOT NULL", "node 'x'")


def test_properties_are_written_in_order_with_their_types() -> None:
    typed = [{"key": "at", "type": "ZONED DATETIME NOT NULL", "text": "2026-01-01T00:00:00Z"}]
    values, types = written_properties([["z", 1], ["a", None], ["b", "x"]], typed, "n")
    assert list(values) == ["at", "b", "z"] and values["at"] == "2026-01-01T00:00:00Z"
    assert types == {"at": "datetime"}


def test_relationship_records_come_in_one_order() -> None:
    row = {
        "key": "a",
        "labels": ["Fact"],
        "edges": [
            {
                "type": "SUPERSEDES",
                "end": "c",
                "end_labels": ["Fact"],
                "properties": [],
                "typed": [],
            },
            {
                "type": "REFERENCES",
                "end": "b",
                "end_labels": ["Fact"],
                "properties": [],
                "typed": [],
            },
            {
                "type": "REFERENCES",
                "end": "b",
                "end_labels": ["Fact"],
                "properties": [["actor", "api"]],
                "typed": [],
            },
        ],
    }
    records = edge_records(row)
    assert [(r["type"], r["end"]["key"]) for r in records] == [
        ("REFERENCES", "b"),
        ("REFERENCES", "b"),
        ("SUPERSEDES", "c"),
    ]
    assert edge_records({**row, "edges": row["edges"][::-1]}) == records
    assert all(r["start"] == {"labels": ["Fact"], "key": "a"} for r in records)


def test_read_values_refuse_what_json_would_not_restore() -> None:
    assert read_value("n", 2, None) == 2
    assert read_value("tags", ["a"], None) == ["a"]
    assert math.isnan(read_value("score", "NaN", "float"))
    assert read_value("blob", "AAE=", "bytes") == b"\x00\x01"
    for value, kind in (({"a": 1}, None), ([[1]], None), ("1.5", "float"), ("%%", "bytes")):
        with pytest.raises(ExportFormatError):
            read_value("p", value, kind)


OLD, NEW = "11111111-2222-3333-4444-555555555555", "99999999-8888-7777-6666-555555555555"


def test_remapping_follows_every_reference_but_never_the_words_as_said() -> None:
    ids = {OLD: NEW}
    assert remapped("superseded_by", OLD, ids) == NEW
    assert remapped("facts", [OLD, "other"], ids) == [NEW, "other"]
    record = '{"op": "MERGE", "facts": ["' + OLD + '"], "raw": "{\\"id\\": \\"' + OLD + '\\"}"}'
    assert remapped("applied", record, ids) == record.replace(OLD, NEW)
    assert remapped("text", f"the id {OLD}", ids) == f"the id {OLD}"
    assert remapped("content", OLD, ids) == OLD
    assert remapped("count", 3, ids) == 3
    assert remapped("anything", OLD, None) == OLD


def test_the_header_is_checked_first() -> None:
    header = read_header({**HEADER, "exported_at": "t", "erasure_check": "c"})
    assert (header.ns, header.model, header.dimension) == ("user-42", "m", 3)
    for bad, words in (
        ({**HEADER, "version": 2}, "version 2"),
        ({**HEADER, "format": "other"}, "format"),
        ({**HEADER, "record": "node"}, "header"),
        ({**HEADER, "embedder": {"model": 1, "dimension": 3}}, "embedder"),
        ("not a record", "header"),
    ):
        with pytest.raises(ExportFormatError, match=words) as refused:
            read_header(bad)
        assert refused.value.line == 1


def test_records_are_checked_by_kind() -> None:
    node = {"record": "node", "labels": ["Fact"], "key": "k", "properties": {}}
    assert record_kind(node, 2) == "node"
    edge = {
        "record": "relationship",
        "type": "SUPERSEDES",
        "start": {"labels": ["Fact"], "key": "a"},
        "end": {"labels": ["Fact"], "key": "b"},
    }
    assert record_kind(edge, 3) == "relationship"
    assert record_kind({"record": "end", "nodes": {"Fact": 1}, "relationships": 0}, 4) == "end"
    for bad in (
        {**node, "labels": []},
        {**node, "key": 3},
        {**node, "properties": []},
        {**edge, "end": {"key": "b"}},
        {"record": "end", "nodes": {}},
        {"record": "other"},
    ):
        with pytest.raises(ExportFormatError, match="record 9"):
            record_kind(bad, 9)


def test_an_export_of_another_embedder_is_refused_with_the_way_out() -> None:
    header = read_header(HEADER)
    check_embedder(header, "m", 3)
    with pytest.raises(ImportEmbedderMismatchError, match="GRAPHMEM_EMBEDDING_MODEL=m") as refused:
        check_embedder(header, "other", 3)
    assert refused.value.graph_model == "other" and refused.value.embedder_model == "m"
    with pytest.raises(ImportEmbedderMismatchError):
        check_embedder(header, "m", 384)


def test_the_erasure_check_is_a_fingerprint_of_the_namespace_key() -> None:
    assert erasure_check(None, "a") is None
    check = erasure_check("key", "a")
    assert check == erasure_check("key", "a") and check != erasure_check("key", "b")
    assert check != erasure_check("other", "a") and "key" not in (check or "")


def test_staging_namespaces_are_named_so_that_no_caller_can_name_one() -> None:
    name = stage_name("user:42", "0" * 32)
    assert name == "~import:user:42:" + "0" * 32 and stage_target(name) == "user:42"
    assert stage_target("user-42") is None and stage_target("~import:user-42:short") is None
    with pytest.raises(InvalidInputError):
        MemoryCore(dimension=3, default_ns=name)


def test_the_listing_reads_one_summary_per_namespace_and_folds_in_staged_imports() -> None:
    at = datetime(2026, 1, 2, tzinfo=UTC)
    rows: list[dict[str, Any]] = [
        {"ns": "b", "counts": [["facts:active", 2], ["facts:superseded", 1]], "last_write": at},
        {
            "ns": "a",
            "counts": [["episodes", 3], ["runs", 1], ["forgotten_facts", 1]],
            "last_write": None,
        },
        {"ns": stage_name("a", "f" * 32), "counts": [["facts:active", 5]], "last_write": at},
        {"ns": stage_name("c", "e" * 32), "counts": [["episodes", 2]], "last_write": at},
    ]
    listed = summaries(rows)
    assert [s.ns for s in listed] == ["a", "b", "c"]
    a, b, c = listed
    assert (a.episodes, a.consolidation_runs, a.forgotten_facts, a.import_pending) == (3, 1, 1, 5)
    assert (b.facts, b.facts_believed, b.facts_by_status["superseded"]) == (3, 2, 1)
    assert b.last_write_at == at and not b.empty
    assert c.empty and c.import_pending == 2


def test_labels_are_counted_in_one_order() -> None:
    assert label_of(["Tombstone"]) == "Tombstone" and label_of(["X", "Fact"]) == "Fact"
    assert list(in_label_order({"ConsolidationRun": 1, "Fact": 2, "Zed": 1, "Episode": 0})) == [
        "Fact",
        "ConsolidationRun",
        "Zed",
    ]


def test_drop_needs_confirm_and_import_a_header_before_anything_is_read() -> None:
    core = MemoryCore(dimension=3, model_id="m")
    with pytest.raises(ConfirmationRequiredError, match="confirm=True"):
        next(core.drop_namespace("user-42"))
    with pytest.raises(InvalidInputError):
        next(core.drop_namespace("no spaces allowed", confirm=True))
    assert isinstance(next(core.drop_namespace("user-42", dry_run=True)), Transaction)
    with pytest.raises(ExportFormatError, match="no records"):
        next(core.import_([], ns="user-42"))
    with pytest.raises(ImportEmbedderMismatchError):
        next(core.import_([{**HEADER, "embedder": {"model": "x", "dimension": 3}}], ns="b"))
    with pytest.raises(InvalidInputError, match="batch_size"):
        next(core.import_([HEADER], ns="user-42", batch_size=0))
    with pytest.raises(InvalidInputError, match="page_size"):
        core.export("user-42", page_size=0)


def _runtime_labels() -> dict[str, set[str]]:
    """Every label the runtime queries create or merge, with the files that do."""
    made: dict[str, set[str]] = {}
    for path in Path(QUERY_DIR).rglob("*.cypher"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\b(?:CREATE|MERGE)\b[^;]*?\(\w*:(\w+)", text):
            made.setdefault(match.group(1), set()).add(path.name)
        for match in re.finditer(r"\bSET\s+\w+:(\w+)", text):
            made.setdefault(match.group(1), set()).add(path.name)
    return made


def test_every_label_a_namespace_holds_is_exported_and_dropped() -> None:
    # A label added to the schema must join the export (a section and its page query), the
    # import and the drop (ns_drop), or be named here as bookkeeping outside namespaces (the
    # API keys of graphmem serve are the service's, not a namespace's; a recorded request answer
    # is a :GraphmemLock too, dropped with the namespace's locks).
    bookkeeping = {
        "GraphmemLock",
        "GraphmemSchema",
        "GraphmemMigration",
        "GraphmemApiKey",
        "GraphmemRequest",
    }
    made = set(_runtime_labels()) - {"$"}
    assert made - bookkeeping <= set(NAMESPACE_LABELS), made
    assert tuple(dict.fromkeys(s.label for s in SECTIONS)) == NAMESPACE_LABELS
    drop = (Path(QUERY_DIR) / "namespaces" / "ns_drop.cypher").read_text(encoding="utf-8")
    flip = (Path(QUERY_DIR) / "namespaces" / "import_flip.cypher").read_text(encoding="utf-8")
    for label in NAMESPACE_LABELS:
        assert f"(n:{label}" in drop and f"(n:{label}" in flip, label


def test_every_lock_a_namespace_has_is_a_kind_the_drop_knows() -> None:
    package = Path(QUERY_DIR).parents[1]
    kinds = set()
    for path in [*package.rglob("*.py"), *Path(QUERY_DIR).rglob("*.cypher")]:
        text = path.read_text(encoding="utf-8")
        kinds |= set(re.findall(r"""["']key["']: f["'](\w+):\{""", text))
        kinds |= set(re.findall(r"GraphmemLock \{key: '(\w+):'", text))
    assert kinds and kinds <= set(LOCK_KINDS), kinds
