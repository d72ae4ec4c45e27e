"""Text for people: stored text made safe to show (control characters as escapes), and lists
of further items in an error message."""

from __future__ import annotations

import re
from collections.abc import Sequence

# C0 and C1 controls (terminal escapes, backspaces, bells, newlines) and the bidirectional
# formatting characters, which reorder what follows them on screen.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def and_more(others: Sequence[str], noun: str, shown: int = 10) -> str:
    """`` (and N more: {noun}s a, b, ...)``, naming the first ``shown`` of ``others`` (``{noun}``
    alone for one); empty when there are none. For an error that names one item of several."""
    if not others:
        return ""
    tail = ", ..." if len(others) > shown else ""
    nouns = noun if len(others) == 1 else f"{noun}s"
    return f" (and {len(others)} more: {nouns} {', '.join(others[:shown])}{tail})"


def printable(text: str) -> str:
    """``text`` with every control and bidirectional formatting character written as its
    Python escape (``\\x1b``, ``\\u202e``), so that a stored value cannot break a layout,
    reorder a line or drive a terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
