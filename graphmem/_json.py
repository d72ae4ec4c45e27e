"""JSON read strictly: an object that names a key twice is refused, and each line of a JSON
Lines text is read on its own, with the reason for each line that is not a JSON object; and
JSON files read leniently (:func:`json_file`), where an unreadable file counts as absent."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from graphmem._text import brief
from graphmem.errors import DuplicateKeyError


def json_file(path: Path) -> Any:
    """The JSON value in the file at ``path``, or None when it cannot be read or parsed (a
    missing or damaged file counts as absent: a model's optional config, a cache's record)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKeyError(f"the key {brief(key)} appears twice in one object")
        data[key] = value
    return data


def load_json(text: str) -> Any:
    """``json.loads``, except that an object naming a key twice, at any depth, is refused with
    :class:`DuplicateKeyError` (``json.loads`` would silently keep the last value)."""
    return json.loads(text, object_pairs_hook=_refuse_duplicate_keys)


def json_error(exc: ValueError | RecursionError) -> str:
    """Why ``json.loads`` refused a text, on one line: a syntax error with its column, nesting
    too deep for its recursion, or another value error (an integer too long to convert)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    if isinstance(exc, DuplicateKeyError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    return f"{exc!s:.200}"


def json_objects(
    lines: Iterable[str | bytes], problems: list[tuple[int, str]]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, object)`` for each non-blank line that holds a JSON object (a leading
    byte-order mark is ignored; lines given as bytes must be UTF-8); every other line adds
    ``(line_number, reason)`` to ``problems``."""
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append((number, f"not valid UTF-8 (byte {exc.start + 1} of the line)"))
                continue
        line = raw.rstrip("\r\n")  # so that an error at the end names the line's last column
        line = line.lstrip("\ufeff") if number == 1 else line
        if not line.strip():
            continue
        try:
            data = load_json(line)
        except (ValueError, RecursionError) as exc:
            problems.append((number, f"invalid JSON: {json_error(exc)}"))
            continue
        if not isinstance(data, dict):
            problems.append((number, f"expected a JSON object, got {_json_type(data)}"))
            continue
        yield number, data


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"
