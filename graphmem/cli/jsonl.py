"""Messages from JSON Lines: one JSON object per line, each a :class:`~graphmem.models.Message`.

Parsing is pure and checks every line before anything is written: blank lines are ignored,
and each malformed line is reported with its 1-based line number and the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import ValidationError

from graphmem._json import json_objects
from graphmem.models import Message, describe_validation_error


@dataclass(frozen=True)
class ParsedLines:
    """The messages of the good lines, in input order, and one problem per bad line."""

    messages: list[Message] = field(default_factory=list)
    #: The 1-based line number of each message in ``messages``.
    line_numbers: list[int] = field(default_factory=list)
    #: ``(line_number, reason)`` for each malformed line.
    problems: list[tuple[int, str]] = field(default_factory=list)


def parse_message_lines(lines: Iterable[str | bytes]) -> ParsedLines:
    """Parse and validate every line: JSON syntax first, then the fields of a Message.

    A datetime without a time zone is an error, like everywhere in graphmem.
    """
    result = ParsedLines()
    for number, data in json_objects(lines, result.problems):
        try:
            message = Message.model_validate(data)
        except ValidationError as exc:
            result.problems.append((number, describe_validation_error(exc)))
            continue
        result.messages.append(message)
        result.line_numbers.append(number)
    return result
