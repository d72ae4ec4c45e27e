"""User text to Lucene query text for Neo4j fulltext indexes.

Fulltext indexes parse their query as Lucene syntax, so user text such as ``what's 2+2?``,
``C:\\path`` or ``"unbalanced`` would change the query's meaning or fail to parse. Every
character Lucene treats specially is escaped, and the words AND, OR, NOT and TO (operators only
in upper case) are lowered, so the query always means "any of these words".

Question words and pronouns are kept: the index's English analyzer removes only its own short
stop list, so "I" and "my" still match first-person messages. Leaving out graphmem's longer
list (:data:`graphmem.core.recall.ranking.STOP_WORDS`) ranked "I'm a software engineer" above
"I do yoga" for "where do I work", but lost 7 of 179 BEAM questions at rank 1, whose answers
are mostly first-person user messages.

Each term of the query becomes one clause, and Lucene refuses a query of more than 1,024
clauses. The terms are those of Lucene's StandardTokenizer (Unicode word segmentation, UAX #29,
as of Unicode 9.0): a run of letters and digits of an alphabetic script is one term, but each
ideograph, each hiragana character and each emoji is a term of its own, and a term is cut into
pieces of 255 UTF-16 code units. :func:`_terms` counts them from above, and a long query keeps
each word once, in order, up to :data:`MAX_QUERY_TERMS` terms; a word too long to fit whole keeps
the prefix that fits in the terms the other words leave. So any text recall accepts can be
searched.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_OPERATOR = re.compile(r"\b(AND|OR|NOT|TO)\b")

#: The most terms a fulltext query holds (Lucene's own limit is 1,024 clauses).
MAX_QUERY_TERMS = 512

#: One more term is counted per this many UTF-16 code units of a word: Lucene cuts a term
#: at 255, and pieces that end at a joining character ("a'b", "x_y") may be a little shorter.
_PIECE = 250

# Blocks whose letters, marks and digits Lucene's tokenizer joins into one term (UAX #29
# ALetter, Hebrew_Letter, Numeric, and Extend, which attaches to what precedes it): Latin,
# IPA, modifier letters, combining marks, Greek, Cyrillic, Armenian, Hebrew, Arabic, Syriac,
# Thaana, the Indic scripts up to Sinhala, Georgian, Hangul, Ethiopic, Cherokee, Canadian
# syllabics, and the extended Latin and Greek blocks. Thai, Lao, Myanmar and Khmer (one term
# per run too) and Katakana are left out, so each of their characters counts as a term.
_JOINING_BLOCKS = (
    (0x00C0, 0x052F),
    (0x0531, 0x058F),
    (0x0591, 0x05FF),
    (0x0600, 0x06FF),
    (0x0700, 0x074F),
    (0x0780, 0x07BF),
    (0x0900, 0x0DFF),
    (0x10A0, 0x10FF),
    (0x1100, 0x11FF),
    (0x1200, 0x137F),
    (0x13A0, 0x13FF),
    (0x1400, 0x167F),
    (0x1E00, 0x1FFF),
    (0x3131, 0x318E),
    (0xAC00, 0xD7A3),
)
_JOINING_SINGLES = frozenset((0x00AA, 0x00B5, 0x00BA))
_JOINING_CATEGORIES = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd"))


@cache
def _joins(ch: str) -> bool:
    """Whether Lucene's tokenizer surely joins ``ch`` with a neighbouring character of the same
    kind. Outside ASCII a character must lie in :data:`_JOINING_BLOCKS` and be a letter, mark or
    digit both now and in Unicode 3.2, so that it has that class in Lucene's older tables too."""
    code = ord(ch)
    if code < 0x80:
        return ch.isalnum()
    if code not in _JOINING_SINGLES and not any(lo <= code <= hi for lo, hi in _JOINING_BLOCKS):
        return False
    return (
        unicodedata.category(ch) in _JOINING_CATEGORIES
        and unicodedata.ucd_3_2_0.category(ch) in _JOINING_CATEGORIES
    )


def _terms(word: str) -> int:
    """How many terms Lucene's standard tokenizer may make of ``word`` (no whitespace), at
    most: one per run of joining characters (:func:`_joins`), one per other character that is
    not ASCII (each ideograph, kana, emoji or symbol may be a term of its own; ASCII
    punctuation never is), and one per :data:`_PIECE` UTF-16 code units, for the pieces Lucene
    cuts long terms into."""
    count = 0
    units = 0
    in_run = False
    for ch in word:
        code = ord(ch)
        units += 2 if code > 0xFFFF else 1
        if _joins(ch):
            if not in_run:
                count += 1
                in_run = True
            continue
        in_run = False
        if code >= 0x80:
            count += 1
    return count + units // _PIECE


def _prefix(word: str, budget: int) -> str:
    """The longest prefix of ``word`` of at most ``budget`` terms (:func:`_terms` grows with
    the prefix, so a binary search finds it)."""
    low, high = 0, len(word)
    while low < high:
        middle = (low + high + 1) // 2
        if _terms(word[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return word[:low]


def _within_limit(words: list[str]) -> list[str]:
    """``words``, each once (case-insensitively), in order, as long as their terms fit in
    :data:`MAX_QUERY_TERMS`: whole words first, then, with the terms left, the prefix that fits
    of each word too long to fit whole (so one long word neither crowds out the words after it
    nor is lost)."""
    seen: set[str] = set()
    unique: list[str] = []
    for word in words:
        key = word.casefold()
        if key not in seen:
            seen.add(key)
            unique.append(word)
    counts = [_terms(word) for word in unique]
    kept: list[str | None] = [None] * len(unique)
    budget = MAX_QUERY_TERMS
    for i, (word, terms) in enumerate(zip(unique, counts, strict=True)):
        if 0 < terms <= budget:
            kept[i] = word
            budget -= terms
    for i, (word, terms) in enumerate(zip(unique, counts, strict=True)):
        if kept[i] is None and terms > budget > 0:
            prefix = _prefix(word, budget)
            used = _terms(prefix)
            if used:
                kept[i] = prefix
                budget -= used
    return [word for word in kept if word is not None]


def _searchable(ch: str) -> bool:
    """Whether ``ch`` can be (part of) a term: a letter or digit, or a symbol such as an emoji,
    which Lucene's tokenizer makes a term of its own."""
    return ch.isalnum() or unicodedata.category(ch) == "So"


def lucene_query(text: str) -> str | None:
    """Escaped Lucene query text for ``text``, or None when it holds no searchable character
    (no letter, digit or symbol such as an emoji)."""
    words = text.split()
    if sum(_terms(word) for word in words) > MAX_QUERY_TERMS:
        words = _within_limit(words)
    query = " ".join(words)
    if not any(_searchable(ch) for ch in query):
        return None
    escaped = _SPECIAL.sub(r"\\\1", query)
    return _OPERATOR.sub(lambda m: m.group(1).lower(), escaped)
