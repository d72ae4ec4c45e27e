from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.fulltext import MAX_QUERY_TERMS, _terms, lucene_query


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


def test_long_text_keeps_each_word_once_within_the_term_limit() -> None:
    assert lucene_query("The quick fox. " * 3) == "The quick fox. " * 2 + "The quick fox."
    long = lucene_query("The quick brown fox jumps over the lazy dog. " * 150)
    assert long == "The quick brown fox jumps over lazy dog."
    many = lucene_query(" ".join(f"word{i}" for i in range(2000)))
    assert many is not None
    assert many.split() == [f"word{i}" for i in range(MAX_QUERY_TERMS)]
    # CJK text is split into one term per character.
    cjk = lucene_query("猫" * 600 + " 犬")
    assert cjk == "犬"
    # A single token that alone exceeds the limit is left out; nothing left means no query.
    assert lucene_query("-".join(["ab"] * 600)) is None


@given(st.text(max_size=3000))
def test_no_query_exceeds_the_term_limit(text: str) -> None:
    result = lucene_query(text)
    if result is not None:
        assert sum(_terms(token) for token in result.split()) <= MAX_QUERY_TERMS
