"""User text to Lucene query text for Neo4j fulltext indexes.

Fulltext indexes parse their query as Lucene syntax, so user text such as ``what's 2+2?``,
``C:\\path`` or ``"unbalanced`` would change the query's meaning or fail to parse. Every
character Lucene treats specially is escaped, and the words AND, OR and NOT (operators only in
upper case) are lowered, so the query always means "any of these words".

Each term of the query becomes one clause, and Lucene refuses a query of more than 1,024
clauses. A long query keeps each word once, in order, up to :data:`MAX_QUERY_TERMS` terms, so
that any text recall accepts can be searched.
"""

from __future__ import annotations

import re
import unicodedata

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_OPERATOR = re.compile(r"\b(AND|OR|NOT|TO)\b")
_WORD = re.compile(r"[^\W_]+")

#: The most terms a fulltext query holds (Lucene's own limit is 1,024 clauses).
MAX_QUERY_TERMS = 512


def _terms(token: str) -> int:
    """How many terms Lucene's standard tokenizer may make of ``token``, at most: one per run
    of letters and digits, and one per wide (CJK) character, which it splits one by one."""
    wide = sum(1 for ch in token if unicodedata.east_asian_width(ch) in ("W", "F"))
    return len(_WORD.findall(token)) + wide


def _within_limit(text: str) -> str:
    """``text``'s whitespace-separated words, each once (case-insensitively), in order, as
    long as their terms fit in :data:`MAX_QUERY_TERMS`."""
    seen: set[str] = set()
    kept: list[str] = []
    budget = MAX_QUERY_TERMS
    for token in text.split():
        key = token.casefold()
        if key in seen:
            continue
        seen.add(key)
        terms = _terms(token)
        if 0 < terms <= budget:
            kept.append(token)
            budget -= terms
    return " ".join(kept)


def lucene_query(text: str) -> str | None:
    """Escaped Lucene query text for ``text``, or None when it holds no searchable character."""
    if not any(ch.isalnum() for ch in text):
        return None
    if sum(_terms(token) for token in text.split()) > MAX_QUERY_TERMS:
        text = _within_limit(text)
        if not text:
            return None
    escaped = _SPECIAL.sub(r"\\\1", text)
    return _OPERATOR.sub(lambda m: m.group(1).lower(), escaped).strip()
