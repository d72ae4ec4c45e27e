from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.fulltext import lucene_query


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("where does the user work", "where does the user work"),
        ("what's 2+2?", "what's 2\\+2\\?"),
        ('say "hi', 'say \\"hi'),
        ("C:\\temp/x", "C\\:\\\\temp\\/x"),
        ("cats AND dogs OR NOT fish", "cats and dogs or not fish"),
        ("(a) [b] {c} ~d ^e *f !g -h &&i ||j", None),
    ],
)
def test_escaping(text: str, expected: str | None) -> None:
    result = lucene_query(text)
    if expected is not None:
        assert result == expected
    else:
        assert result is not None
        assert not re.search(r'(?<!\\)[()\[\]{}~^*!\-"]', result)


@pytest.mark.parametrize("text", ["", "   ", "?!*", "\n\t", "()"])
def test_nothing_searchable_gives_none(text: str) -> None:
    assert lucene_query(text) is None


@given(st.text())
def test_no_unescaped_special_character_survives(text: str) -> None:
    result = lucene_query(text)
    if result is None:
        return
    unescaped = re.sub(r"\\.", "", result)
    assert not re.search(r'[+\-!(){}\[\]^"~*?:\\/&|]', unescaped)
    assert not re.search(r"\b(AND|OR|NOT|TO)\b", unescaped)
