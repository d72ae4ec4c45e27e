"""The neutral evaluation format: conversations and questions as JSON Lines.

* **Conversations**: one message per line with ``conversation_id``, ``session_id``,
  ``message_id``, ``role``, optional ``speaker``, ``time`` (ISO 8601 with a UTC offset) and
  ``text``. A message id is unique within its conversation; lines may come in any order, and
  each conversation's messages are ordered by ``time`` (then by line) for ingest.
* **Questions**: one question per line with ``conversation_id``, ``question``,
  ``question_time`` (ISO 8601 with an offset), ``gold_message_ids`` (a list, possibly empty),
  optional ``category`` and an optional free ``extra`` object. Two ``extra`` shapes are read
  by the runner: ``original_ids`` with ``updated_ids`` (a knowledge update: does the updated
  message rank above the original?) and ``first_statement_ids`` with
  ``second_statement_ids`` (a contradiction: are both statements among the top hits?).

Parsing checks every line and raises :class:`~graphmem.errors.BadLinesError` naming each bad
line's number and reason; nothing is ingested from a file with a bad line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from graphmem import BadLinesError, InvalidInputError
from graphmem.models import AwareDatetime, EpisodeText, Label, describe_validation_error, is_blank
from graphmem.testing import json_objects

ConversationId = Annotated[str, Field(min_length=1, max_length=256)]
MessageId = Annotated[str, Field(min_length=1, max_length=256)]

#: ``extra`` keys naming the messages of a knowledge update and of a contradiction.
UPDATE_KEYS = ("original_ids", "updated_ids")
CONTRADICTION_KEYS = ("first_statement_ids", "second_statement_ids")


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EvalMessage(_Line):
    """One message of a conversation."""

    conversation_id: ConversationId
    session_id: Annotated[str, Field(min_length=1, max_length=256)]
    message_id: MessageId
    role: Label
    speaker: Label | None = None
    time: AwareDatetime
    text: EpisodeText


class EvalQuestion(_Line):
    """One question about a conversation, with the ids of the messages that answer it."""

    conversation_id: ConversationId
    question: Annotated[str, Field(min_length=1, max_length=10_000)]
    question_time: AwareDatetime
    gold_message_ids: tuple[MessageId, ...]
    category: Label | None = None
    extra: dict[str, Any] | None = None

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is empty or only whitespace")
        return value

    @field_validator("gold_message_ids")
    @classmethod
    def _distinct(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(value))  # a gold id listed twice counts once

    @field_validator("extra")
    @classmethod
    def _id_lists(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for key in (*UPDATE_KEYS, *CONTRADICTION_KEYS):
            if value is not None and key in value:
                ids = value[key]
                if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                    raise ValueError(f"extra.{key} must be a list of message id strings")
        return value

    def id_pair(self, keys: tuple[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """The two id lists of ``extra`` under ``keys``, or None when either is absent."""
        if self.extra is None or not all(key in self.extra for key in keys):
            return None
        first, second = (tuple(str(i) for i in self.extra[key]) for key in keys)
        return first, second


Line = TypeVar("Line", bound=_Line)


def parse_lines(
    lines: Iterable[str | bytes], model: type[Line], skipped: list[int] | None = None
) -> list[Line]:
    """Every non-blank line as ``model``; raises BadLinesError listing each bad line.

    With ``skipped``, a message whose ``text`` is a string with no visible character is left
    out and its line number appended there (such a message holds nothing to find, and
    ``Memory.ingest`` refuses it)."""
    parsed: list[Line] = []
    problems: list[tuple[int, str]] = []
    for number, data in json_objects(lines, problems):
        text = data.get("text") if skipped is not None and isinstance(data, dict) else None
        if isinstance(text, str) and is_blank(text):
            skipped.append(number)  # type: ignore[union-attr]
            continue
        try:
            parsed.append(model.model_validate(data))
        except ValidationError as exc:
            problems.append((number, describe_validation_error(exc)))
    if problems:
        raise BadLinesError(problems)
    return parsed


def check_dataset(messages: Sequence[EvalMessage], questions: Sequence[EvalQuestion]) -> None:
    """Message ids unique per conversation; every question's conversation and ids exist; at
    least one question (an evaluation of none would report nothing as if it were a result)."""
    known: dict[str, set[str]] = {}
    problems: list[str] = [] if questions else ["no questions"]
    for message in messages:
        ids = known.setdefault(message.conversation_id, set())
        if message.message_id in ids:
            problems.append(
                f"message id {message.message_id!r} appears twice in conversation "
                f"{message.conversation_id!r}"
            )
        ids.add(message.message_id)
    for number, question in enumerate(questions, start=1):
        present = known.get(question.conversation_id)
        if present is None:
            problems.append(f"question {number}: no conversation {question.conversation_id!r}")
            continue
        named = set(question.gold_message_ids)
        for keys in (UPDATE_KEYS, CONTRADICTION_KEYS):
            pair = question.id_pair(keys)
            if pair is not None:
                named.update(pair[0], pair[1])
        missing = sorted(named - present)
        if missing:
            problems.append(
                f"question {number}: unknown message id(s) {', '.join(missing[:5])} in "
                f"conversation {question.conversation_id!r}"
            )
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise InvalidInputError("inconsistent evaluation data: " + "; ".join(problems[:10]) + more)


def read_messages(path: Path, skipped: list[int] | None = None) -> list[EvalMessage]:
    """The messages of ``path``; with ``skipped``, empty messages are left out and their line
    numbers appended there (see :func:`parse_lines`)."""
    # Read as bytes: a line that is not UTF-8 is then reported with its number.
    with path.open("rb") as handle:
        return parse_lines(handle, EvalMessage, skipped)


def read_questions(path: Path) -> list[EvalQuestion]:
    with path.open("rb") as handle:
        return parse_lines(handle, EvalQuestion)


def write_jsonl(path: Path, rows: Iterable[BaseModel]) -> int:
    """Write each model as one JSON line; returns how many."""
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(row.model_dump_json(exclude_none=True) + "\n")
            count += 1
    return count
