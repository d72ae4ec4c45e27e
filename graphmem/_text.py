"""Text for people: stored text made safe to show (control characters as escapes), and lists
of further items in an error message."""

from __future__ import annotations

import builtins
import re
import reprlib
import unicodedata
from collections.abc import Sequence

# C0 and C1 controls (terminal escapes, backspaces, bells, newlines), Unicode's line and
# paragraph separators (line breaks to str.splitlines and to editors), and the bidirectional
# formatting characters, which reorder what follows them on screen.
_CONTROL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def and_more(others: Sequence[str], noun: str, shown: int = 10) -> str:
    """`` (and N more: {noun}s a, b, ...)``, naming the first ``shown`` of ``others`` (``{noun}``
    alone for one); empty when there are none. For an error that names one item of several."""
    if not others:
        return ""
    tail = ", ..." if len(others) > shown else ""
    nouns = noun if len(others) == 1 else f"{noun}s"
    return f" (and {len(others)} more: {nouns} {', '.join(others[:shown])}{tail})"


class _Brief(reprlib.Repr):
    """reprlib's repr, which shows a few items of each container and a few levels: its time
    and length do not grow with the value, even one that holds a list many times over."""

    def repr_str(self, x: str, level: int) -> str:
        # The start of the string, as repr(x) starts, so that a cut value reads as one.
        return builtins.repr(x[: self.maxstring + 1])

    def repr_int(self, x: int, level: int) -> str:
        try:
            return str(super().repr_int(x, level))
        except ValueError:  # more digits than Python turns into text
            return f"<an int of about {x.bit_length() * 0.30103:.0f} digits>"


_BRIEF = _Brief()
_BRIEF.maxstring = _BRIEF.maxlong = _BRIEF.maxother = 80


def brief(value: object, width: int = 80) -> str:
    """``repr(value)`` cut to ``width`` characters, for an error message about a value given
    by the caller, whatever its size or nesting."""
    try:
        text = _BRIEF.repr(value)
    except Exception:  # a __repr__ of the caller's that fails
        text = f"<{type(value).__name__} object>"
    return text[:width]


def printable(text: str) -> str:
    """``text`` with every control and bidirectional formatting character written as its
    Python escape (``\\x1b``, ``\\u202e``), so that a stored value cannot break a layout,
    reorder a line or drive a terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


#: A word: a signed number with its decimals ("-5", "3.5"), or letters and digits with the
#: marks that make a name of them ("C++", "C#"); other punctuation and symbols separate words.
_WORD = re.compile(r"[+-]?\d+(?:[.,]\d+)*|[^\W_]+[+#]*", re.UNICODE)


def normalised(text: str) -> str:
    """Case, accents' composition, punctuation and spacing ironed out: the form in which two
    texts count as the same (consolidation's duplicates, erasure's "same text again")."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    return " ".join(_WORD.findall(text.replace("'", "")))


_ROUGH_TOKEN = re.compile(r"\w+|[^\w\s]")


def rough_tokens(text: str) -> int:
    """Words and punctuation marks in ``text``: close to what a BPE tokenizer bills for
    English, without loading one."""
    return len(_ROUGH_TOKEN.findall(text))
