"""The namespace export format, ``graphmem-namespace`` version 1: its records, how each value
is written so that an import restores it exactly, and the id map an import applies.

A document is a sequence of JSON objects (one per line in a file): a header, the namespace's
nodes, the relationships between them, and an end record (see docs/guides/namespaces.md).
Values JSON holds as they are (texts, whole numbers, finite floats, true/false, lists of
those) are written plainly; every other one has its type in the record's ``types``: times,
dates and durations as the text Neo4j writes (offset or zone name, nanoseconds kept), an
embedding as ``vector`` (base64 of its little-endian float32 values), a float JSON cannot
hold as ``float`` (``"NaN"``, ``"Infinity"``, ``"-Infinity"``), bytes as ``bytes`` (base64).
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from graphmem.errors import ExportFormatError

FORMAT = "graphmem-namespace"
VERSION = 1

#: Every label a namespace's nodes carry that an export writes and a drop removes, in the
#: order an export writes them; the lock nodes (:GraphmemLock) are bookkeeping, made again on
#: use, and only dropped.
NAMESPACE_LABELS = (
    "Fact",
    "Episode",
    "Tombstone",
    "ConsolidationRun",
    "ConsolidationState",
    "ConsolidationRecord",
    "ConsolidationChange",
)
#: Node labels an import looks up by key through an index (the others by element id).
INDEXED_LABELS = ("Fact", "Episode", "Tombstone", "ConsolidationRun")
#: Node labels whose key is an id unique across the database (checked for clashes on import).
ID_LABELS = frozenset(INDEXED_LABELS)
#: Properties an import never rewrites when it gives ids new values: the words as said.
CONTENT_KEYS = frozenset({"text", "content"})
#: Properties written as vectors (float32) when every value is one.
VECTOR_KEYS = frozenset({"embedding"})

#: Neo4j's names of the types an export writes as text (``valueType``), and the format's.
_CYPHER_TYPES = {
    "ZONED DATETIME": "datetime",
    "LOCAL DATETIME": "localdatetime",
    "DATE": "date",
    "ZONED TIME": "time",
    "LOCAL TIME": "localtime",
    "DURATION": "duration",
}
TEMPORAL_TYPES = frozenset(
    [*_CYPHER_TYPES.values(), *(f"list<{t}>" for t in _CYPHER_TYPES.values())]
)
_NOT_NULL = re.compile(r"\s+NOT NULL")
#: An id as graphmem makes them (a UUID), wherever it stands in a longer text.
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def format_type(cypher_type: str, where: str) -> str:
    """The format's name of a typed property's Cypher type (``LIST<ZONED DATETIME NOT NULL>``
    is ``list<datetime>``); a type the format has no place for (a point) is refused."""
    plain = _NOT_NULL.sub("", cypher_type).strip()
    inner = plain[5:-1].strip() if plain.startswith("LIST<") and plain.endswith(">") else None
    name = _CYPHER_TYPES.get(inner if inner is not None else plain)
    if name is None:
        raise ExportFormatError(
            f"{where} holds a value of type {cypher_type}, which the export format cannot write"
        )
    return f"list<{name}>" if inner is not None else name


def plain_value(key: str, value: Any, where: str) -> tuple[Any, str | None]:
    """A property value as the document writes it, with its type when JSON alone would not
    restore it (None when it does)."""
    if isinstance(value, bool | int | str):
        return value, None
    if isinstance(value, float):
        if math.isfinite(value):
            return value, None
        return ("NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"), "float"
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii"), "bytes"
    if isinstance(value, list | tuple):
        items = list(value)
        if key in VECTOR_KEYS and items and isinstance(items[0], float):
            exact = np.asarray(items, dtype=np.float64)
            single = exact.astype("<f4")
            if np.array_equal(single, exact):
                return base64.b64encode(single.tobytes()).decode("ascii"), "vector"
        if all(
            isinstance(v, bool | int | str) or (isinstance(v, float) and math.isfinite(v))
            for v in items
        ):
            return items, None
    raise ExportFormatError(
        f"{where}: property {key!r} holds a {type(value).__name__} the export format cannot write"
    )


def written_properties(
    properties: Iterable[list[Any]], typed: list[dict[str, Any]], where: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """A node's or relationship's properties as a record holds them, and their ``types``:
    ``properties`` are the [key, value] pairs of the others, ``typed`` (from the page query)
    the exact text of each time, date and duration."""
    values: dict[str, Any] = {}
    types: dict[str, str] = {}
    for t in typed:
        types[t["key"]], values[t["key"]] = format_type(t["type"], where), t["text"]
    for key, value in properties:
        if value is None:
            continue
        values[key], kind = plain_value(key, value, where)
        if kind is not None:
            types[key] = kind
    return dict(sorted(values.items())), dict(sorted(types.items()))


def read_value(key: str, value: Any, kind: str | None) -> Any:
    """A plain or ``float``/``bytes``-typed property of a record as the driver sends it;
    times, dates, durations and vectors are the caller's (Cypher reads them)."""
    if kind is None:
        if _plain_json(value):
            return value
    elif kind == "float" and value in _FLOATS:
        return _FLOATS[value]
    elif kind == "bytes" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            pass
    raise ExportFormatError(f"property {key!r} is not a valid {kind or 'plain'} value")


def read_vector(key: str, value: Any) -> list[float]:
    """A ``vector`` property: base64 of little-endian float32 values."""
    try:
        packed = base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        packed = b""
    if not packed or len(packed) % 4:
        raise ExportFormatError(f"property {key!r} is not a valid vector")
    values: list[float] = np.frombuffer(packed, dtype="<f4").astype(np.float64).tolist()
    return values


def _plain_json(value: Any) -> bool:
    if isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return True
    if isinstance(value, list):
        return all(_plain_json(v) and not isinstance(v, list) for v in value)
    return False


def remapped(key: str, value: Any, ids: Mapping[str, str] | None) -> Any:
    """``value`` with each id of ``ids`` replaced by its new id: a text or a list item that is
    one, and each id (a UUID, as graphmem makes them) inside a longer text, such as the JSON
    of a consolidation record. The words as said (:data:`CONTENT_KEYS`) are never rewritten.
    ``ids`` is None when no id was given a new one (its emptiness is not asked: a ChainMap
    would count its keys)."""
    if ids is None or key in CONTENT_KEYS:
        return value
    if isinstance(value, list):
        return [remapped(key, v, ids) for v in value]
    if not isinstance(value, str):
        return value
    if value in ids:
        return ids[value]
    return _UUID.sub(lambda m: ids.get(m.group(0), m.group(0)), value)


def label_of(labels: list[str]) -> str:
    """The label a node is counted under: the first of graphmem's it carries."""
    return next((label for label in NAMESPACE_LABELS if label in labels), ":".join(labels))


def in_label_order(counts: Mapping[str, int]) -> dict[str, int]:
    """Counts by label in the order of :data:`NAMESPACE_LABELS` (facts first), without zeros."""
    order = {label: i for i, label in enumerate(NAMESPACE_LABELS)}
    ranked = sorted(counts.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))
    return {label: n for label, n in ranked if n}
