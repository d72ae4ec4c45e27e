"""User text to Lucene query text for Neo4j fulltext indexes.

Fulltext indexes parse their query as Lucene syntax, so user text such as ``what's 2+2?``,
``C:\\path`` or ``"unbalanced`` would change the query's meaning or fail to parse. Every
character Lucene treats specially is escaped, and the words AND, OR and NOT (operators only in
upper case) are lowered, so the query always means "any of these words".
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_OPERATOR = re.compile(r"\b(AND|OR|NOT|TO)\b")


def lucene_query(text: str) -> str | None:
    """Escaped Lucene query text for ``text``, or None when it holds no searchable character."""
    if not any(ch.isalnum() for ch in text):
        return None
    escaped = _SPECIAL.sub(r"\\\1", text)
    return _OPERATOR.sub(lambda m: m.group(1).lower(), escaped).strip()
