"""Values in and out of ``graphmem cypher``: the ``-p name=value`` parameters, read as the types
a query's header declares, and Neo4j's values as plain data for tables, CSV and JSON.

A parameter of a typed header is read as its type (:data:`~graphmem.store.cypher.PARAM_TYPES`):
``string`` as given; ``integer`` and ``float`` as numbers; ``boolean`` from ``true``/``false``,
``yes``/``no`` or ``1``/``0``; ``datetime`` by :func:`~graphmem.core.audit.times.moment` (ISO
8601 with a zone, ``2026-03-01``, ``now``, ``3 days ago``), as a UTC datetime; ``list<string>``
from a JSON list or texts separated by commas; ``map`` from a JSON object. A parameter without a
declared type (a ``-q`` query's, or an untyped header's) is read as JSON when it parses as JSON
and as text otherwise; ``-p name:type=value`` names the type instead.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

import neo4j.graph
import neo4j.spatial
import neo4j.time

from graphmem._text import brief
from graphmem.cli.output import csv_text
from graphmem.core.audit.times import moment
from graphmem.errors import InvalidInputError
from graphmem.store.cypher import PARAM_TYPES, CypherQuery, used_params

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INTEGER = re.compile(r"[+-]?\d+")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")
_INT64 = (-(2**63), 2**63 - 1)
#: Properties left out of a node or relationship in the output.
DROPPED_PROPERTIES = frozenset({"embedding"})


@dataclass(frozen=True)
class ParamOption:
    """One ``-p`` option: the parameter's name, the type it names (``name:type=value``), and
    the value as given."""

    name: str
    kind: str | None
    raw: str


def parse_option(text: str) -> ParamOption:
    """``name=value`` or ``name:type=value`` (split at the first ``=``); a ``ValueError`` saying
    what is wrong otherwise."""
    head, sep, raw = text.partition("=")
    if not sep:
        raise ValueError(f"{text!r} is not NAME=VALUE (or NAME:TYPE=VALUE)")
    name, colon, kind = (part.strip() for part in head.partition(":"))
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a parameter name (letters, digits and _)")
    if colon and kind not in PARAM_TYPES:
        raise ValueError(f"unknown type {kind!r} for {name!r} (known: {', '.join(PARAM_TYPES)})")
    return ParamOption(name, kind if colon else None, raw)


def parse_options(texts: Iterable[str]) -> dict[str, ParamOption]:
    """The ``-p`` options by name; a ``ValueError`` for a malformed one or a name given twice."""
    options: dict[str, ParamOption] = {}
    for text in texts:
        option = parse_option(text)
        if option.name in options:
            raise ValueError(f"parameter {option.name!r} is given twice")
        options[option.name] = option
    return options


def _bad(name: str, kind: str, raw: str, why: str = "") -> InvalidInputError:
    reason = f": {why}" if why else ""
    return InvalidInputError(
        f"parameter {name!r} must be {kind} ({PARAM_TYPES[kind]}), got {brief(raw)}{reason}"
    )


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


#: The most levels of lists and objects a parameter's JSON may nest.
MAX_JSON_DEPTH = 32


class _TooDeep(ValueError):
    """JSON nested deeper than :data:`MAX_JSON_DEPTH`."""


def _json(text: str) -> Any:
    """Strict JSON: no ``NaN`` or ``Infinity``, no key twice in an object, at most
    :data:`MAX_JSON_DEPTH` levels of nesting (:class:`_TooDeep`, a ``ValueError``)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        if twice:
            raise ValueError(f"the key {twice[0]!r} is given twice")
        return dict(items)

    too_deep = _TooDeep(f"lists and objects nest more than {MAX_JSON_DEPTH} levels deep")
    # Cheap first: the deepest run of brackets bounds the nesting from above.
    if _bracket_depth(text) > MAX_JSON_DEPTH:
        raise too_deep
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=pairs)
    except RecursionError:
        raise too_deep from None


def _bracket_depth(text: str) -> int:
    """The nesting of ``[`` and ``{`` in ``text`` outside JSON strings."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def typed_value(name: str, kind: str, raw: str) -> Any:
    """``raw`` read as a parameter of type ``kind`` (a key of ``PARAM_TYPES``); an
    :class:`~graphmem.errors.InvalidInputError` naming the parameter and its type otherwise."""
    text = raw.strip()
    if kind == "string":
        return raw
    if kind == "integer":
        if not _INTEGER.fullmatch(text):
            raise _bad(name, kind, raw)
        number = int(text)
        if not _INT64[0] <= number <= _INT64[1]:
            raise _bad(name, kind, raw, "out of the 64-bit range Neo4j stores")
        return number
    if kind == "float":
        try:
            value = float(text)
        except ValueError:
            raise _bad(name, kind, raw) from None
        if not math.isfinite(value):
            raise _bad(name, kind, raw, "not a finite number")
        return value
    if kind == "boolean":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise _bad(name, kind, raw, "say true/false, yes/no or 1/0")
    if kind == "datetime":
        try:
            return moment(name, text)
        except InvalidInputError as exc:
            raise _bad(name, kind, raw, str(exc)) from None
    if kind == "list<string>":
        if text.startswith("["):
            try:
                items = _json(text)
            except ValueError as exc:
                raise _bad(name, kind, raw, f"not valid JSON: {exc}") from None
            if not all(isinstance(item, str) for item in items):
                raise _bad(name, kind, raw, "every item must be a JSON string")
            return items
        return [item.strip() for item in raw.split(",") if item.strip()]
    if kind == "map":
        try:
            value = _json(text)
        except ValueError as exc:
            raise _bad(name, kind, raw, f"not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise _bad(name, kind, raw, "not a JSON object")
        return value
    raise InvalidInputError(f"parameter {name!r}: unknown type {kind!r}")


def untyped_value(raw: str) -> Any:
    """A value with no declared type: JSON when it parses as JSON (numbers, ``true``,
    ``false``, ``null``, lists, objects, quoted strings), else the text itself."""
    try:
        return _json(raw)
    except json.JSONDecodeError:
        return raw
    except _TooDeep as exc:
        raise InvalidInputError(f"a parameter's JSON value: {exc}") from None
    except ValueError as exc:
        if "given twice" in str(exc):
            raise InvalidInputError(f"a parameter's JSON object: {exc}") from None
        return raw  # NaN, Infinity: text


def query_params(
    query: CypherQuery | None,
    text: str,
    options: Mapping[str, ParamOption],
    *,
    ns: str | None,
    limit: int,
) -> dict[str, Any]:
    """The parameters to send: each ``-p`` option read by its type (the header's, or the one it
    names), ``ns`` and ``limit`` filled in where the query has them and ``-p`` does not give
    them (``limit`` as one row more than the row limit, so that a cut can be seen). A missing or
    unknown parameter, a value that does not fit its type, or a ``-p`` type other than the
    header's is an :class:`~graphmem.errors.InvalidInputError`; nothing has run."""
    declared = query.params if query is not None else used_params(text)
    types: Mapping[str, str] = query.param_types if query is not None else {}
    where = f"query {query.name!r}" if query is not None else "the query"
    unknown = sorted(set(options) - set(declared))
    if unknown:
        has = ", ".join(declared) or "none"
        raise InvalidInputError(f"{where} has no parameter {', '.join(unknown)} (it has: {has})")
    params: dict[str, Any] = {}
    for name, option in options.items():
        declared_kind = types.get(name)
        if option.kind and declared_kind and option.kind != declared_kind:
            raise InvalidInputError(
                f"parameter {name!r} of {where} is a {declared_kind}, not a {option.kind}"
            )
        kind = option.kind or declared_kind
        params[name] = typed_value(name, kind, option.raw) if kind else untyped_value(option.raw)
    if "ns" in declared and "ns" not in params and ns is not None:
        params["ns"] = ns
    if "limit" in declared and "limit" not in params:
        params["limit"] = limit + 1
    missing = [name for name in declared if name not in params]
    if missing:
        hints = ", ".join(f"-p {name}=..." for name in missing)
        raise InvalidInputError(f"{where} needs parameter(s) {', '.join(missing)}: give {hints}")
    return params


def describe_params(query: CypherQuery) -> str:
    """``ns: string, as_of: datetime, limit: integer`` (a name alone where no type is given)."""
    return ", ".join(
        f"{name}: {query.param_types[name]}" if name in query.param_types else name
        for name in query.params
    )


# --- Neo4j's values as plain data ----------------------------------------------------------
def _properties(entity: neo4j.graph.Entity) -> dict[str, Any]:
    return {
        key: plain(value) for key, value in sorted(entity.items()) if key not in DROPPED_PROPERTIES
    }


def _end(node: neo4j.graph.Node | None) -> Any:
    if node is None:
        return None
    return plain(node.get("id")) if node.get("id") is not None else node.element_id


def plain(value: Any) -> Any:
    """A value of a record as JSON-ready data: times as ISO 8601, a node as its labels and
    properties, a relationship as its type, ends and properties, a path as its nodes and
    relationships (embeddings left out), bytes as base64, a point as its SRID and
    coordinates."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, neo4j.graph.Node):
        return {"labels": sorted(value.labels), "properties": _properties(value)}
    if isinstance(value, neo4j.graph.Relationship):
        return {
            "type": value.type,
            "start": _end(value.start_node),
            "end": _end(value.end_node),
            "properties": _properties(value),
        }
    if isinstance(value, neo4j.graph.Path):
        return {
            "nodes": [plain(node) for node in value.nodes],
            "relationships": [plain(rel) for rel in value.relationships],
        }
    if isinstance(
        value, neo4j.time.DateTime | neo4j.time.Date | neo4j.time.Time | neo4j.time.Duration
    ):
        return value.iso_format()
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return neo4j.time.Duration(seconds=value.total_seconds()).iso_format()
    if isinstance(value, neo4j.spatial.Point):
        return {"srid": value.srid, "coordinates": [plain(c) for c in value]}
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return str(value)


def plain_rows(columns: Sequence[str], records: Iterable[Any]) -> list[dict[str, Any]]:
    """Records (``neo4j.Record`` or sequences of values in column order) as plain dicts."""
    return [
        {column: plain(value) for column, value in zip(columns, record, strict=True)}
        for record in records
    ]


def cell(value: Any) -> str:
    """A plain value as one table or CSV cell: text as is, ``true``/``false``, lists and maps
    as compact JSON, nothing as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def to_csv(
    columns: Sequence[str], rows: Sequence[Mapping[str, Any]], *, escape: bool = True
) -> str:
    """The rows as CSV with a header line; with ``escape``, text cells a spreadsheet would
    run as a formula are defused (:func:`~graphmem.cli.output.csv_cell`)."""
    return csv_text(
        columns, ([_csv_value(row.get(column)) for column in columns] for row in rows),
        escape=escape,
    )  # fmt: skip


def _csv_value(value: Any) -> Any:
    """A number stays a number (``-2`` is data, not a formula); anything else its text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return cell(value)


def to_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    """One JSON object a line."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
