"""The kinds of property value an import accepts (:class:`Kind`): each a check of a value
with its ``types`` entry, used by :mod:`graphmem.core.namespaces.contract`'s table. Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphmem.models.fields import (
    MAX_CALL_BYTES,
    MAX_IDS,
    MAX_LABEL_CHARS,
    MAX_METADATA_BYTES,
    MAX_TEXT_CHARS,
)

#: An id as graphmem makes them: a UUID in its canonical lower-case form.
ID_FORMAT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HASH = re.compile(r"[0-9a-f]{16,128}")
#: The longest text a time, date or duration takes as Neo4j writes it (a zone name included).
_MAX_TIME_CHARS = 96
#: The most items a list of ids or numbers holds (a consolidation state lists the facts left for
#: the next run, at most a run's new facts; a record, the facts its clusters showed).
MAX_LISTED = MAX_IDS * 100


@dataclass(frozen=True)
class Kind:
    """One kind of property value: ``check`` says what is wrong with a value given with its
    ``types`` entry (None when it is right); ``typed`` is the entry it must have."""

    name: str
    typed: str | None
    check: Callable[[Any], str | None]


def text(limit: int, noun: str = "text") -> Kind:
    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return f"is not a {noun}"
        if len(value) > limit:
            return f"has {len(value):,} characters; the most graphmem writes is {limit:,}"
        return None

    return Kind(noun, None, check)


def json_text(limit: int, shape: type | None = None) -> Kind:
    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return "is not a JSON text"
        if len(value.encode("utf-8", "surrogatepass")) > limit:
            return f"is over {limit:,} bytes, the most graphmem writes"
        try:
            loaded = json.loads(value)
        except (ValueError, RecursionError):
            return "is not valid JSON"
        if shape is not None and not isinstance(loaded, shape | None):
            return f"is not a JSON {shape.__name__}"
        return None

    return Kind("JSON text", None, check)


def json_texts(limit: int) -> Kind:
    """A list of JSON texts (a consolidation record's plans, operations and reviews), at most
    ``limit`` bytes in all."""
    one = json_text(limit)

    def check(value: Any) -> str | None:
        if not isinstance(value, list):
            return "is not a list of JSON texts"
        total = 0
        for item in value:
            if (why := one.check(item)) is not None:
                return f"holds an item that {why}"
            total += len(item)
            if total > limit:
                return f"is over {limit:,} bytes, the most graphmem writes"
        return None

    return Kind("list of JSON texts", None, check)


def _id(value: Any) -> str | None:
    return None if isinstance(value, str) and ID_FORMAT.fullmatch(value) else "is not an id"


def _hash(value: Any) -> str | None:
    return None if isinstance(value, str) and _HASH.fullmatch(value) else "is not a hash"


def _time(value: Any) -> str | None:
    ok = isinstance(value, str) and 0 < len(value) <= _MAX_TIME_CHARS
    return None if ok else "is not a time"


def _integer(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63
    return None if ok else "is not a whole number"


def _number(value: Any) -> str | None:
    return _integer(value) if not isinstance(value, float) else None


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else "is not true or false"


def one_of(*allowed: str) -> Kind:
    def check(value: Any) -> str | None:
        return None if value in allowed else f"is not one of {', '.join(allowed)}"

    return Kind("choice", None, check)


def listed(item: Kind, limit: int) -> Kind:
    def check(value: Any) -> str | None:
        if not isinstance(value, list):
            return f"is not a list of {item.name}s"
        if len(value) > limit:
            return f"has {len(value):,} items; the most graphmem writes is {limit:,}"
        for v in value:
            if (why := item.check(v)) is not None:
                return f"holds an item that {why}"
        return None

    return Kind(f"list of {item.name}s", None, check)


ID = Kind("id", None, _id)
HASH = Kind("hash", None, _hash)
TIME = Kind("time", "datetime", _time)
INTEGER = Kind("whole number", None, _integer)
NUMBER = Kind("number", None, _number)
FLAG = Kind("true or false", None, _flag)
LABEL = text(MAX_LABEL_CHARS, "short text")
REASON = text(MAX_TEXT_CHARS)
#: Checked against the graph's dimension by :func:`check_node`.
VECTOR = Kind("embedding", "vector", lambda value: None)
METADATA = json_text(MAX_METADATA_BYTES, dict)
PLAN = json_texts(MAX_CALL_BYTES)
IDS = listed(ID, MAX_LISTED)
TIER = one_of("hot", "warm", "cold")

Spec = Mapping[str, Kind]
