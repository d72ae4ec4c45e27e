"""Tool results as compact JSON that fits a model's context: graphmem's models without the
fields a model does not need, times to the second, ids shortened where that is safe, and a
size cap that drops list items from the end with a clear ``more`` marker."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
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
        "believed",
    }
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$")
#: Characters an id is shortened to where that prefix names one id in the namespace.
SHORT_ID = 8
_CLIP = 600


def plain(value: Any) -> Any:
    """A model, mapping or list as JSON-ready data without noise, empty or absent fields."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if key in _NOISE:
                continue
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
            return match.group(1) + zone
    return value


def ids_in(data: Any) -> set[str]:
    """Every full id (a UUID) in the data, as a value or within a sentence."""
    found: set[str] = set()

    def walk(item: Any) -> None:
        if isinstance(item, str):
            found.update(_UUID.findall(item))
        elif isinstance(item, Mapping):
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)

    walk(data)
    return found


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
    """The data with each full id, as a value or within a sentence, in its short form."""
    if isinstance(data, str):
        return _UUID.sub(lambda m: mapping.get(m.group(0), m.group(0)), data)
    if isinstance(data, Mapping):
        return {key: replace_ids(value, mapping) for key, value in data.items()}
    if isinstance(data, list):
        return [replace_ids(value, mapping) for value in data]
    return data


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def capped(data: dict[str, Any], max_chars: int, items: str | None = None) -> str:
    """The result as JSON of at most ``max_chars`` characters: items of the list ``items``
    dropped from the end (``more`` says how many and what to do), then long strings
    clipped (``clipped`` says so)."""
    text = dumps(data)
    if len(text) <= max_chars:
        return text
    listed = data.get(items) if items else None
    if items and isinstance(listed, list) and listed:
        keep_low, keep_high = 0, len(listed)
        while keep_low < keep_high:  # the most items that fit
            middle = (keep_low + keep_high + 1) // 2
            if len(dumps(_trimmed(data, items, listed, middle))) <= max_chars:
                keep_low = middle
            else:
                keep_high = middle - 1
        data = _trimmed(data, items, listed, max(keep_low, 1))
        text = dumps(data)
        if len(text) <= max_chars:
            return text
    data = {**_clipped(data), "clipped": f"strings cut at {_CLIP} characters to fit the cap"}
    text = dumps(data)
    if len(text) <= max_chars:
        return text
    return dumps(
        {
            "error": "the result does not fit the size cap",
            "more": f"{len(text):,} characters; ask for fewer items or one at a time",
        }
    )


def _trimmed(data: dict[str, Any], key: str, listed: list[Any], keep: int) -> dict[str, Any]:
    left = len(listed) - keep
    out = {**data, key: listed[:keep]}
    if left:
        out["more"] = f"{left} more {key} not shown (size cap); ask for fewer or narrow the request"
    return out


def _clipped(data: Any) -> Any:
    if isinstance(data, str) and len(data) > _CLIP:
        return data[:_CLIP] + "…"
    if isinstance(data, Mapping):
        return {key: _clipped(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_clipped(value) for value in data]
    return data
