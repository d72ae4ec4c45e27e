from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.core.recall.fulltext import MAX_QUERY_TERMS, _terms, lucene_query

#: Lucene refuses a query of more clauses than this.
LUCENE_MAX_CLAUSES = 1024


def conservative_terms(query: str) -> int:
    """An upper bound, independent of graphmem's own count, of the terms Lucene's standard
    tokenizer makes of ``query``: one per run of ASCII letters and digits, one per character
    outside ASCII, and one per 200 UTF-16 code units of a word (Lucene cuts terms at 255)."""
    total = 0
    for word in query.split():
        total += len(re.findall(r"[A-Za-z0-9]+", word))
        total += sum(1 for ch in word if ord(ch) >= 0x80)
        total += len(word.encode("utf-16-le")) // 2 // 200
    return total


def unescaped(query: str) -> str:
    return re.sub(r"\\(.)", r"\1", query)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("where does the user work", "where does the user work"),
        ("what's 2+2?", "what's 2\\+2\\?"),
        ('say "hi', 'say \\"hi'),
        ("C:\\temp/x", "C\\:\\\\temp\\/x"),
        ("cats AND dogs OR NOT fish TO go", "cats and dogs or not fish to go"),
        ("cats-AND-dogs TOKYO NOT-TO", "cats\\-and\\-dogs TOKYO not\\-to"),
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


@pytest.mark.parametrize(("text", "expected"), [("❤ ☀", "❤ ☀"), ("🦄?", "🦄\\?"), ("👍🏽", "👍🏽")])
def test_emoji_are_searchable(text: str, expected: str) -> None:
    # Lucene's tokenizer makes each emoji a term, which the index holds like any word.
    assert lucene_query(text) == expected


@given(st.text())
def test_no_unescaped_special_character_survives(text: str) -> None:
    result = lucene_query(text)
    if result is None:
        return
    bare = re.sub(r"\\.", "", result)
    assert not re.search(r'[+\-!(){}\[\]^"~*?:\\/&|]', bare)
    assert not re.search(r"\b(AND|OR|NOT|TO)\b", bare)


def test_question_words_and_pronouns_are_kept() -> None:
    # Lucene's English analyzer drops its own stop words; "I" and "my" match first-person
    # messages, which is where most answers lie.
    assert lucene_query("Where do I work?") == "Where do I work\\?"


@pytest.mark.parametrize(
    ("word", "terms"),
    [
        ("pizza", 1),
        ("naïve", 1),
        ("привет", 1),
        ("한국어", 1),
        ("can't", 2),
        ("C3PO-2", 2),
        ("❤", 1),
        ("❤❤❤", 3),
        ("☀✈", 2),
        ("😀", 1),
        ("北京", 2),
        ("ぁあ", 2),
        ("カタカナ", 4),
        ("pizza❤", 2),
        ("?!", 0),
        ("a" * 1000, 5),
    ],
)
def test_term_count(word: str, terms: int) -> None:
    assert _terms(word) == terms


def test_long_text_keeps_each_word_once_within_the_term_limit() -> None:
    assert lucene_query("The quick fox. " * 3) == "The quick fox. The quick fox. The quick fox."
    long = lucene_query("The quick brown fox jumps over the lazy dog. " * 150)
    assert long == "The quick brown fox jumps over lazy dog."
    many = lucene_query(" ".join(f"word{i}" for i in range(2000)))
    assert many is not None
    assert many.split() == [f"word{i}" for i in range(MAX_QUERY_TERMS)]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I love pizza " + "❤" * 1100, "I love pizza ❤"),
        ("pizza " + "❤ " * 1100, "pizza ❤"),
        ("pizza " + "☀✈" * 600, "pizza ☀✈"),
    ],
)
def test_emoji_count_against_the_clause_limit(text: str, kept: str) -> None:
    result = lucene_query(text)
    assert result is not None
    assert result.startswith(kept)
    assert conservative_terms(result) <= LUCENE_MAX_CLAUSES
    assert sum(_terms(word) for word in result.split()) <= MAX_QUERY_TERMS


def test_a_word_over_the_limit_keeps_the_prefix_that_fits() -> None:
    cjk = lucene_query("北" * 600)
    assert cjk is not None
    assert set(cjk) == {"北"}
    assert 400 <= len(cjk) < 600
    assert _terms(cjk) <= MAX_QUERY_TERMS
    assert conservative_terms(cjk) <= LUCENE_MAX_CLAUSES
    # Whole words come first; a long word keeps, in its place, what they leave.
    mixed = lucene_query("dumplings " + "猫" * 600 + " 犬 " + "会議は何曜日ですか" * 120 + " team")
    assert mixed is not None
    first, cats, dog, team = mixed.split()  # no room is left for the second long word
    assert (first, dog, team) == ("dumplings", "犬", "team")
    assert cats == "猫" * len(cats)
    assert 3 + _terms(cats) == MAX_QUERY_TERMS
    assert conservative_terms(mixed) <= LUCENE_MAX_CLAUSES
    joined = lucene_query("-".join(["ab"] * 600))
    assert joined is not None
    assert joined.startswith("ab\\-ab\\-")
    assert _terms(unescaped(joined)) <= MAX_QUERY_TERMS
    assert lucene_query("a" * 10_000) == "a" * 10_000


@given(st.text(max_size=3000))
def test_no_query_exceeds_the_term_limit(text: str) -> None:
    result = lucene_query(text)
    if result is not None:
        assert sum(_terms(token) for token in unescaped(result).split()) <= MAX_QUERY_TERMS


@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(["a", "7", "北", "ぁ", "カ", "❤", "😀", "-", "_", "'"]),
            min_size=1,
            max_size=1200,
        ),
        max_size=12,
    )
)
def test_long_mixed_queries_stay_under_lucenes_clause_limit(words: list[str]) -> None:
    result = lucene_query(" ".join(words))
    if result is not None:
        assert conservative_terms(unescaped(result)) <= LUCENE_MAX_CLAUSES
