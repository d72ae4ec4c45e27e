"""Tool results as compact JSON that fits a model's context: graphmem's models without the
fields a model does not need, times to the second, ids shortened where that is safe, and a
size cap that drops list items from the end with a clear ``more`` marker."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel

#: Fields of graphmem's models that a model reading a tool result does not need.
_NOISE = frozenset(
    {
        "ns",
        "text_hash",
        "content_hash",
        "scores",
        "timing",
        "candidates",
        "gated",
        "widened",
        "exact_fallback",
        "tokenizer",
        "access_count",
        "last_accessed_at",
        "valid_from_set_at",
        "stated_valid_to",
        "recorded_by",
        "believed",
    }
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d{1,3})?\d*(Z|[+-]\d\d:\d\d)$")
#: Characters an id is shortened to where that prefix names one id in the namespace.
SHORT_ID = 8
#: Fields whose values are the caller's own data: passed on as stored.
_VERBATIM = frozenset({"metadata"})


def plain(value: Any) -> Any:
    """A model, mapping or list as JSON-ready data without noise, empty or absent fields;
    times to the millisecond, with ``Z`` for UTC; a ``metadata`` value as stored."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if key in _NOISE:
                continue
            if key not in _VERBATIM:
                item = plain(item)
            if item is None or item == [] or item == {} or item == ():
                continue
            out[key] = item
        return out
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, datetime):
        value = value.isoformat()
    if isinstance(value, str):
        match = _TIME.match(value)
        if match:
            zone = "Z" if match.group(3) in ("Z", "+00:00") else match.group(3)
            return match.group(1) + (match.group(2) or "") + zone
    return value


def strings(data: Any) -> Iterator[str]:
    """Every string value in the data, at any depth."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, Mapping):
        for value in data.values():
            yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)


def ids_in(data: Any) -> set[str]:
    """Every full id (a UUID) in the data, as a value or within a sentence."""
    return {found for text in strings(data) for found in _UUID.findall(text)}


def short_ids(ids: Iterable[str], unique_in_graph: Mapping[str, str]) -> dict[str, str]:
    """Each id's short form: its first :data:`SHORT_ID` characters where that prefix named
    this one id in the namespace (``unique_in_graph``: prefix to the one id found), and no
    other id of the same result shares it; otherwise the full id."""
    ids = sorted(set(ids))
    prefixes: dict[str, int] = {}
    for item in ids:
        prefixes[item[:SHORT_ID]] = prefixes.get(item[:SHORT_ID], 0) + 1
    out = {}
    for item in ids:
        prefix = item[:SHORT_ID]
        safe = prefixes[prefix] == 1 and unique_in_graph.get(prefix) == item
        out[item] = prefix if safe else item
    return out


def replace_ids(data: Any, mapping: Mapping[str, str]) -> Any:
    """The data with each full id, as a value, a key or within a sentence, in its short form."""
    if isinstance(data, str):
        return _UUID.sub(lambda m: mapping.get(m.group(0), m.group(0)), data)
    if isinstance(data, Mapping):
        return {
            replace_ids(key, mapping): replace_ids(value, mapping) for key, value in data.items()
        }
    if isinstance(data, list):
        return [replace_ids(value, mapping) for value in data]
    return data


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def fitted(
    data: dict[str, Any], max_chars: int, items: str | None = None, *, tail: bool = False
) -> dict[str, Any]:
    """The result cut to at most ``max_chars`` characters of JSON. Scalars always stay.
    Lists keep the same share of their items, as large as fits (``items``, the main list,
    keeps at least one), from the start or, with ``tail``, from the end; ``more`` says what
    was left out. Then the longest strings are cut to the room left (``clipped`` says so)."""
    if len(dumps(data)) <= max_chars:
        return data
    lists = {k: v for k, v in data.items() if isinstance(v, list) and v}

    def attempt(share: float) -> dict[str, Any]:
        out = {k: v for k, v in data.items() if k != "more"}
        dropped = {}
        for key, whole in lists.items():
            keep = math.ceil(share * len(whole))
            if key == items:
                keep = max(keep, 1)
            out[key] = whole[len(whole) - keep :] if tail else whole[:keep]
            dropped[key] = len(whole) - keep
        counts = ", ".join(f"{n} more {k}" for k, n in dropped.items() if n)
        if counts:
            out["more"] = f"{counts} not shown (size cap); ask for fewer or narrow the request"
        return out

    low, high = 0.0, 1.0
    for _ in range(20):  # the largest share that fits, to about one part in a million
        middle = (low + high) / 2
        if len(dumps(attempt(middle))) <= max_chars:
            low = middle
        else:
            high = middle
    out = attempt(low)
    for _ in range(8):  # the longest strings cut to the room left
        excess = len(dumps(out)) - max_chars
        if excess <= 0:
            return out
        out = {**_clip_longest(out, excess + 40), "clipped": "long texts were cut to fit the cap"}
    return {k: v for k, v in out.items() if not isinstance(v, list | dict)} | {
        "more": "the result does not fit the size cap; ask for fewer items"
    }


def _clip_longest(data: Any, cut: int) -> Any:
    """The data with its longest string shortened by ``cut`` characters (and an ellipsis)."""
    target = max(strings(data), key=len, default="")
    shorter = target[: max(len(target) - cut, 0)] + "…"

    def swap(item: Any) -> Any:
        if isinstance(item, str):
            return shorter if item is target else item
        if isinstance(item, Mapping):
            return {key: swap(value) for key, value in item.items()}
        if isinstance(item, list):
            return [swap(value) for value in item]
        return item

    return swap(data)
