"""The records of a namespace export: written from the page queries' rows, and read back
(checked, with the record's number in every refusal) by an import."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphmem.core.forget.hashing import namespace_key
from graphmem.core.namespaces.document import (
    FORMAT,
    VERSION,
    in_label_order,
    written_properties,
)
from graphmem.errors import ExportFormatError
from graphmem.models.fields import MAX_LABEL_CHARS

_HEADER_FIELDS = frozenset(
    {"record", "format", "version", "graphmem", "ns", "embedder", "exported_at"}
    | {"consistency", "erasure_check"}
)
_END_FIELDS = frozenset(
    {"record", "nodes", "relationships", "changed_during_export", "finished_at"}
)


def erasure_check(erasure_key: str | None, ns: str) -> str | None:
    """A fingerprint of the key namespace ``ns`` hashes erased texts with (not the key): an
    import compares it with its target's to tell whether the tombstones still recognise the
    erased words there."""
    if not erasure_key:
        return None
    key = namespace_key(erasure_key, ns)
    return hmac.new(key, b"graphmem-export-check", hashlib.sha256).hexdigest()[:32]


def header_record(
    ns: str,
    *,
    version: str,
    model: str | None,
    dimension: int | None,
    exported_at: str,
    erasure: str | None,
) -> dict[str, Any]:
    return {
        "record": "header",
        "format": FORMAT,
        "version": VERSION,
        "graphmem": version,
        "ns": ns,
        "embedder": {"model": model, "dimension": dimension},
        "exported_at": exported_at,
        "consistency": "page",
        "erasure_check": erasure,
    }


def node_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """A node of an export page (``exported_node``'s columns) as a record."""
    where = f"node {row['key']!r}"
    values, types = written_properties(row["properties"], row["typed"], where)
    record: dict[str, Any] = {
        "record": "node",
        "labels": sorted(row["labels"]),
        "key": row["key"],
        "properties": values,
    }
    if types:
        record["types"] = types
    return record


def edge_records(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The relationships of an export page's node as records, in one order (type, other end,
    properties), so that the same graph gives the same document."""
    start = {"labels": sorted(row["labels"]), "key": row["key"]}
    records = []
    for edge in row["edges"]:
        where = f"relationship {edge['type']} from {row['key']!r}"
        values, types = written_properties(edge["properties"], edge["typed"], where)
        record: dict[str, Any] = {
            "record": "relationship",
            "type": edge["type"],
            "start": start,
            "end": {"labels": sorted(edge["end_labels"]), "key": edge["end"]},
            "properties": values,
        }
        if types:
            record["types"] = types
        records.append(record)
    return sorted(records, key=lambda r: (r["type"], r["end"]["key"] or "", _canonical(r)))


def end_record(
    nodes: Mapping[str, int], relationships: int, *, changed: bool, finished_at: str
) -> dict[str, Any]:
    return {
        "record": "end",
        "nodes": in_label_order(nodes),
        "relationships": relationships,
        "changed_during_export": changed,
        "finished_at": finished_at,
    }


def _canonical(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Header:
    """What an import reads from an export's header."""

    ns: str
    model: str | None
    dimension: int | None
    exported_at: str | None
    erasure_check: str | None


def read_header(record: Any) -> Header:
    """The header (record 1), refused unless it is this format's, of the version this
    graphmem reads."""
    if not isinstance(record, Mapping) or record.get("record") != "header":
        raise ExportFormatError(
            "the first record is not a graphmem namespace export's header", line=1
        )
    extra = sorted(set(record) - _HEADER_FIELDS)
    if extra:
        raise ExportFormatError(
            f"the header has fields an export does not write: {', '.join(map(str, extra))}",
            line=1,
        )
    if record.get("format") != FORMAT:
        raise ExportFormatError(f"the format is {record.get('format')!r}, not {FORMAT!r}", line=1)
    if record.get("version") != VERSION:
        raise ExportFormatError(
            f"the export is of format version {record.get('version')!r}; this graphmem reads "
            f"version {VERSION} (use the graphmem version that wrote it, or a newer one)",
            line=1,
        )
    ns, embedder = record.get("ns"), record.get("embedder")
    if not isinstance(ns, str) or not isinstance(embedder, Mapping):
        raise ExportFormatError("the header lacks its ns or its embedder", line=1)
    if not 0 < len(ns) <= MAX_LABEL_CHARS or set(embedder) - {"model", "dimension"}:
        raise ExportFormatError("the header's ns or embedder is malformed", line=1)
    model, dimension = embedder.get("model"), embedder.get("dimension")
    if not isinstance(model, str | None) or not (
        dimension is None or (isinstance(dimension, int) and not isinstance(dimension, bool))
    ):
        raise ExportFormatError("the header's embedder is malformed", line=1)
    exported, check = record.get("exported_at"), record.get("erasure_check")
    return Header(
        ns=ns,
        model=model,
        dimension=dimension,
        exported_at=exported if isinstance(exported, str) else None,
        erasure_check=check if isinstance(check, str) else None,
    )


def record_kind(record: Any, line: int) -> str:
    """``node``, ``relationship`` or ``end``, once the record has that kind's shape."""
    kind = record.get("record") if isinstance(record, Mapping) else None
    if kind == "node":
        if not (_labels(record.get("labels")) and isinstance(record.get("key"), str)):
            raise ExportFormatError("a node record needs labels and a key", line=line)
    elif kind == "relationship":
        ends = (record.get("start"), record.get("end"))
        if not isinstance(record.get("type"), str) or not all(
            isinstance(e, Mapping) and _labels(e.get("labels")) and isinstance(e.get("key"), str)
            for e in ends
        ):
            raise ExportFormatError(
                "a relationship record needs a type, and a start and an end with labels and key",
                line=line,
            )
    elif kind == "end":
        nodes, relationships = record.get("nodes"), record.get("relationships")
        if set(record) - _END_FIELDS:
            raise ExportFormatError("the end record has fields an export does not write", line=line)
        if not (
            isinstance(nodes, Mapping)
            and all(isinstance(v, int) for v in nodes.values())
            and isinstance(relationships, int)
        ):
            raise ExportFormatError(
                "the end record needs its node and relationship counts", line=line
            )
        return "end"
    else:
        raise ExportFormatError(f"unknown record kind {kind!r}", line=line)
    if not isinstance(record.get("properties", {}), Mapping) or not isinstance(
        record.get("types", {}), Mapping
    ):
        raise ExportFormatError("properties and types must be objects", line=line)
    return str(kind)


def _labels(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
