"""Stored text made safe to show: control characters as escapes."""

from __future__ import annotations

import re

# C0 and C1 controls (terminal escapes, backspaces, bells, newlines) and the bidirectional
# formatting characters, which reorder what follows them on screen.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control and bidirectional formatting character written as its
    Python escape (``\\x1b``, ``\\u202e``), so that a stored value cannot break a layout,
    reorder a line or drive a terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
