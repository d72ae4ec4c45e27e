"""BEAM to the neutral evaluation format.

A BEAM directory holds numbered chat directories (``1``, ``2``, ...), each with
``chat.json`` and ``probing_questions.json``; a single chat directory is accepted too.

* ``chat.json`` is a list of batches ``{batch_number, time_anchor, turns}``; ``turns`` is a
  list of turns, each a list of messages ``{role, id, content, time_anchor?, ...}``. Each
  batch becomes a session (``batch-<batch_number>``); a message's id becomes its message id
  (as a string); its role is kept.
* **Times.** A time anchor (``March-15-2024``; also ``2024-03-15`` and ``March 15, 2024``)
  on a batch or a message starts a new period at that date, 00:00 UTC; each following
  message is one minute after the one before (``anchor + n minutes`` for the ``n``-th
  message since the anchor), and never earlier than one minute after the previous message,
  so the conversation order is always the time order. Messages before the first anchor
  count back from the chat's first anchor (2024-01-01 when the chat has none).
* A message longer than graphmem's episode limit (:data:`~graphmem.models.MAX_EPISODE_CHARS`,
  100,000 characters) is cut to that limit, for graphmem and the baselines alike.
* ``probing_questions.json`` maps an ability to its questions. ``source_chat_ids`` is either
  a list of message ids or an object of lists (for instance ``original_info`` and
  ``updated_info``); the gold ids are all ids of all lists (a list nested in a list is
  flattened). Questions without it (the
  abstention questions) have no gold ids. The category is the ability; the question time is
  one hour after the chat's last message. ``extra`` keeps the original ``source_chat_ids``,
  plus ``original_ids``/``updated_ids`` for ``original_info``/``updated_info`` and
  ``first_statement_ids``/``second_statement_ids`` for ``first_statement``/
  ``second_statement``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from graphmem import InvalidInputError
from graphmem.models import MAX_EPISODE_CHARS, describe_validation_error
from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion

_FALLBACK_START = datetime(2024, 1, 1, tzinfo=UTC)
_STEP = timedelta(minutes=1)
_ANCHOR_FORMATS = ("%B-%d-%Y", "%Y-%m-%d", "%B %d, %Y", "%b-%d-%Y", "%b %d, %Y")
_KEY_ALIASES = {
    "original_info": "original_ids",
    "updated_info": "updated_ids",
    "first_statement": "first_statement_ids",
    "second_statement": "second_statement_ids",
}


class BeamFormatError(InvalidInputError):
    """A BEAM file is missing or does not have the expected shape."""


def parse_anchor(value: str, where: str) -> datetime:
    text = value.strip()
    for fmt in _ANCHOR_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise BeamFormatError(f"{where}: time anchor {value!r} is not a date such as March-15-2024")


def parse_chat_selection(text: str) -> list[range]:
    """``1-10``, ``1,3`` or ``1-3,7`` to sorted, non-overlapping ranges of chat numbers (kept
    as ranges: a selection such as ``1-20000000000`` is checked against the chats that exist,
    never spelled out)."""
    parts: list[range] = []
    for part in (p.strip() for p in text.split(",")):
        match = re.fullmatch(r"(\d{1,18})(?:-(\d{1,18}))?", part)
        if not match:
            raise BeamFormatError(f"{text!r} is not a chat selection such as 1-10 or 1,3")
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if high < low:
            raise BeamFormatError(f"{part!r}: the range runs backwards")
        parts.append(range(low, high + 1))
    return _merge(parts)


def _merge(parts: Iterable[int | range]) -> list[range]:
    """Numbers and ranges as sorted ranges that neither overlap nor touch."""
    merged: list[range] = []
    as_ranges = (p if isinstance(p, range) else range(p, p + 1) for p in parts)
    for part in sorted((r for r in as_ranges if r), key=lambda r: r.start):
        if merged and part.start <= merged[-1].stop:
            merged[-1] = range(merged[-1].start, max(merged[-1].stop, part.stop))
        else:
            merged.append(part)
    return merged


#: How many missing chat numbers an error names before "(and N more)".
_SHOWN_MISSING = 10


def chat_dirs(path: Path, chats: Sequence[int | range] | None = None) -> list[Path]:
    """The chat directories under ``path`` (or ``path`` itself when it is one), by number;
    ``chats`` (numbers or ranges of numbers) selects some."""
    if (path / "chat.json").is_file():
        if chats:
            raise BeamFormatError(f"{path} is a single chat directory; --chats does not apply")
        return [path]
    if not path.is_dir():
        raise BeamFormatError(f"{path} is not a directory")
    found = {
        int(child.name): child
        for child in path.iterdir()
        if child.name.isdigit() and (child / "chat.json").is_file()
    }
    if not found:
        raise BeamFormatError(f"{path} holds no chat directories (1/chat.json, 2/chat.json, ...)")
    if not chats:
        return [found[n] for n in sorted(found)]
    ranges = _merge(chats)
    chosen = sorted(n for n in found if any(n in r for r in ranges))
    wanted = sum(r.stop - r.start for r in ranges)
    if len(chosen) < wanted:
        shown: list[int] = []
        for r in ranges:  # the first few missing numbers, without spelling out the ranges
            n = r.start
            while n < r.stop and len(shown) < _SHOWN_MISSING:
                if n not in found:
                    shown.append(n)
                n += 1
        more = wanted - len(chosen) - len(shown)
        tail = f" (and {more} more)" if more else ""
        raise BeamFormatError(f"{path} has no chat {', '.join(map(str, shown))}{tail}")
    return [found[n] for n in chosen]


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BeamFormatError(f"{path} is missing") from exc
    except UnicodeDecodeError as exc:
        raise BeamFormatError(f"{path}: not valid UTF-8 (byte {exc.start + 1})") from exc
    except json.JSONDecodeError as exc:
        raise BeamFormatError(f"{path}: invalid JSON ({exc.msg}, line {exc.lineno})") from exc


def _need(condition: bool, where: str, what: str) -> None:
    if not condition:
        raise BeamFormatError(f"{where}: {what}")


def convert_chat(
    directory: Path, conversation_id: str, *, max_chars: int = MAX_EPISODE_CHARS
) -> tuple[list[EvalMessage], list[EvalQuestion]]:
    """One chat directory's messages and questions in the neutral format."""
    chat_path = directory / "chat.json"
    batches = _load(chat_path)
    _need(isinstance(batches, list), str(chat_path), "expected a list of batches")
    raw: list[tuple[str, dict[str, Any], datetime | None]] = []
    for b, batch in enumerate(batches):
        where = f"{chat_path}: batch {b}"
        _need(isinstance(batch, dict) and isinstance(batch.get("turns"), list), where, "no turns")
        session = f"batch-{batch.get('batch_number', b + 1)}"
        anchor = batch.get("time_anchor")
        pending = parse_anchor(anchor, where) if isinstance(anchor, str) and anchor else None
        for t, turn in enumerate(batch["turns"]):
            _need(isinstance(turn, list), f"{where}, turn {t}", "a turn must be a list of messages")
            for message in turn:
                here = f"{where}, turn {t}"
                _need(isinstance(message, dict), here, "a message must be an object")
                _need(
                    "id" in message and "content" in message, here, "a message needs id and content"
                )
                own = message.get("time_anchor")
                if isinstance(own, str) and own:
                    pending = parse_anchor(own, f"{here}, message {message['id']}")
                raw.append((session, message, pending))
                pending = None
    anchors = [a for _, _, a in raw if a is not None]
    first = anchors[0] if anchors else _FALLBACK_START
    lead = next((i for i, (_, _, a) in enumerate(raw) if a is not None), len(raw))
    messages: list[EvalMessage] = []
    previous: datetime | None = None
    period, offset = first - lead * _STEP, 0
    for session, message, anchor in raw:
        if anchor is not None:
            period, offset = anchor, 0
        when = period + offset * _STEP
        if previous is not None and when <= previous:
            when = previous + _STEP
        offset += 1
        previous = when
        try:
            messages.append(
                EvalMessage(
                    conversation_id=conversation_id,
                    session_id=session,
                    message_id=str(message["id"]),
                    role=str(message.get("role") or "user"),
                    time=when,
                    text=str(message["content"])[:max_chars],
                )
            )
        except ValidationError as exc:
            raise BeamFormatError(
                f"{chat_path}: message {message['id']}: {describe_validation_error(exc)}"
            ) from exc
    asked_at = (previous or first) + timedelta(hours=1)
    return messages, _questions(directory / "probing_questions.json", conversation_id, asked_at)


def _flat(ids: list[Any]) -> list[str]:
    """Message ids as strings, nested lists flattened in order."""
    out: list[str] = []
    for item in ids:
        out += _flat(item) if isinstance(item, list) else [str(item)]
    return out


def _questions(path: Path, conversation_id: str, asked_at: datetime) -> list[EvalQuestion]:
    data = _load(path)
    _need(isinstance(data, dict), str(path), "expected an object mapping abilities to questions")
    out: list[EvalQuestion] = []
    for ability, items in data.items():
        _need(isinstance(items, list), f"{path}: {ability}", "expected a list of questions")
        for n, item in enumerate(items):
            where = f"{path}: {ability} question {n}"
            _need(
                isinstance(item, dict) and isinstance(item.get("question"), str),
                where,
                "no question",
            )
            source = item.get("source_chat_ids")
            extra: dict[str, Any] = {}
            if source is None:
                gold: list[str] = []
            elif isinstance(source, list):
                gold = _flat(source)
            elif isinstance(source, dict):
                gold = []
                for key, ids in source.items():
                    _need(isinstance(ids, list), where, f"source_chat_ids.{key} is not a list")
                    gold += _flat(ids)
                    if key in _KEY_ALIASES:
                        extra[_KEY_ALIASES[key]] = _flat(ids)
            else:
                raise BeamFormatError(f"{where}: source_chat_ids is neither a list nor an object")
            if source is not None:
                extra["source_chat_ids"] = source
            try:
                out.append(
                    EvalQuestion(
                        conversation_id=conversation_id,
                        question=item["question"],
                        question_time=asked_at,
                        gold_message_ids=tuple(gold),
                        category=ability,
                        extra=extra or None,
                    )
                )
            except ValidationError as exc:
                raise BeamFormatError(f"{where}: {describe_validation_error(exc)}") from exc
    return out


def convert(
    path: Path, chats: Sequence[int | range] | None = None
) -> tuple[list[EvalMessage], list[EvalQuestion]]:
    """The selected chats of a BEAM directory; conversation ids are ``beam-<chat number>``
    (``beam-<directory name>`` for a single chat directory)."""
    messages: list[EvalMessage] = []
    questions: list[EvalQuestion] = []
    for directory in chat_dirs(path, chats):
        chat_messages, chat_questions = convert_chat(directory, f"beam-{directory.name}")
        messages += chat_messages
        questions += chat_questions
    return messages, questions
