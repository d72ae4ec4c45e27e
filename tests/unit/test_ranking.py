"""Fusion, recency and the lexical measure on hand-made input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.core.recall.ranking import (
    Candidate,
    RecallConfig,
    content_words,
    credit_next,
    cut_matches,
    fuse,
    holds_names,
    lexical_coverage,
    proper_names,
    recency_factor,
)


def _lists() -> list[tuple[str, str, list[tuple[str, float]]]]:
    return [
        ("vector", "fact", [("a", 0.9), ("b", 0.8), ("c", 0.7)]),
        ("fulltext", "fact", [("c", 12.0), ("d", 6.0)]),
    ]


def test_rrf_weights_each_retriever() -> None:
    config = RecallConfig(fusion="rrf", vector_weight=0.7, fulltext_weight=0.3)
    fused = {c.id: c for c in fuse(_lists(), config)}  # type: ignore[arg-type]
    assert fused["a"].fused == pytest.approx(0.7 / 61)
    assert fused["c"].fused == pytest.approx(0.7 / 63 + 0.3 / 61)
    assert fused["d"].fused == pytest.approx(0.3 / 62)
    assert (fused["c"].vector_rank, fused["c"].fulltext_rank) == (3, 1)


def test_equal_weights_are_plain_rrf_and_order_is_stable() -> None:
    config = RecallConfig(fusion="rrf", vector_weight=1.0, fulltext_weight=1.0)
    ranked = fuse(_lists(), config)  # type: ignore[arg-type]
    assert [c.id for c in ranked] == ["c", "a", "b", "d"]
    assert ranked[0].fused == pytest.approx(1 / 63 + 1 / 61)
    # b and d tie at 1/62; ties break on kind, then id.
    assert ranked[2].fused == pytest.approx(ranked[3].fused)


def test_linear_fusion_normalises_fulltext_by_the_best_score() -> None:
    config = RecallConfig(fusion="linear")
    fused = {c.id: c for c in fuse(_lists(), config)}  # type: ignore[arg-type]
    assert fused["c"].fused == pytest.approx(0.7 * 0.7 + 0.3 * 1.0)
    assert fused["d"].fused == pytest.approx(0.3 * 0.5)


def test_linear_fusion_scores_a_fulltext_only_candidate_by_its_cosine() -> None:
    config = RecallConfig(fusion="linear")
    cosines = {("fact", "d"): 0.85, ("fact", "a"): 0.1}
    fused = {c.id: c for c in fuse(_lists(), config, cosines)}  # type: ignore[arg-type]
    # d was left out of the vector list, not dissimilar: its cosine counts.
    assert fused["d"].fused == pytest.approx(0.7 * 0.85 + 0.3 * 0.5)
    assert fused["a"].fused == pytest.approx(0.7 * 0.9)  # a vector list's own score wins
    # Without cosines a candidate missing from the vector list has none to count.
    assert {c.id: c for c in fuse(_lists(), config)}["d"].fused == pytest.approx(0.15)  # type: ignore[arg-type]
    # RRF ranks by list positions only.
    rrf_config = RecallConfig(fusion="rrf")
    rrf = {c.id: c for c in fuse(_lists(), rrf_config, cosines)}  # type: ignore[arg-type]
    assert rrf["d"].fused == pytest.approx(0.3 / 62)


def test_relative_fusion_divides_each_score_by_the_best_one() -> None:
    """The default: cosine over the best cosine plus fulltext over the best fulltext score,
    per kind, so that the best match of each retriever scores its full weight."""
    config = RecallConfig()
    assert config.fusion == "relative"
    cosines = {("fact", "d"): 0.45}
    fused = {c.id: c for c in fuse(_lists(), config, cosines)}  # type: ignore[arg-type]
    assert fused["a"].fused == pytest.approx(0.7 * 1.0)  # the best cosine (0.9)
    assert fused["c"].fused == pytest.approx(0.7 * 0.7 / 0.9 + 0.3 * 1.0)
    assert fused["d"].fused == pytest.approx(0.7 * 0.45 / 0.9 + 0.3 * 0.5)
    # Scaling every cosine changes nothing: only how they compare counts.
    halved = [
        (r, k, [(i, s / 2) for i, s in items]) if r == "vector" else (r, k, items)
        for r, k, items in _lists()
    ]
    half = {c.id: c for c in fuse(halved, config, {("fact", "d"): 0.225})}  # type: ignore[arg-type]
    assert {i: c.fused for i, c in half.items()} == pytest.approx(
        {i: c.fused for i, c in fused.items()}
    )


def test_an_episode_gains_a_share_of_the_next_message() -> None:
    """credit_next: an episode gains next_credit times the fused score of the message after it
    in its session, when that one is a candidate; facts and other episodes are left alone."""

    def candidates() -> list[Candidate]:
        return [
            Candidate("episode", "reply", fused=0.8),
            Candidate("fact", "f", fused=0.6),
            Candidate("episode", "question", fused=0.5),
            Candidate("episode", "other", fused=0.45),
        ]

    config = RecallConfig(next_credit=0.5)
    following = {"question": "reply", "other": "not-a-candidate", "reply": "later", "f": "reply"}
    ranked = credit_next(candidates(), following, config)
    assert [c.id for c in ranked] == ["question", "reply", "f", "other"]
    assert [c.fused for c in ranked] == pytest.approx([0.5 + 0.4, 0.8, 0.6, 0.45])
    off = credit_next(candidates(), following, config.model_copy(update={"next_credit": 0.0}))
    assert [(c.id, c.fused) for c in off] == [(c.id, c.fused) for c in candidates()]


def test_recency_factor_halves_its_boost_every_half_life() -> None:
    now = datetime(2026, 1, 31, tzinfo=UTC)
    config = RecallConfig(recency_weight=0.2, recency_half_life_days=10)
    assert recency_factor(now, now, config) == pytest.approx(1.2)
    assert recency_factor(now - timedelta(days=10), now, config) == pytest.approx(1.1)
    assert recency_factor(now + timedelta(days=1), now, config) == pytest.approx(1.2)
    assert recency_factor(None, now, config) == 1.0
    assert recency_factor(now, now, config.model_copy(update={"recency": False})) == 1.0


def test_clitics_are_part_of_their_word_not_content_words() -> None:
    # "what's", "user's", "I'm" and "we've" are the words "what", "user", "I" and "we", with
    # a straight or a typographic apostrophe; a stray "s" or "m" is no content word.
    assert content_words("What's the user's dog called?") == {"user", "dog", "call"}
    assert content_words("What\u2019s Maya\u2019s job? I'm asking, we've wondered") == {
        "maya",
        "job",
        "ask",
        "wonder",
    }
    assert content_words("O'Brien doesn't drive") == {"o'brien", "doesn't", "driv"}
    # A question whose only word is a name the text lacks shares nothing with "It's ...".
    assert lexical_coverage(content_words("What's Quux?"), "It's raining in Oslo.") == 0.0
    assert lexical_coverage(content_words("I'm vegan?"), "I'm tired today.") == 0.0


def test_relative_fusion_shares_the_best_cosine_between_facts_and_episodes() -> None:
    """One embedder puts facts' and episodes' cosines on one scale: a weak fact does not get
    the full vector weight because it is the best fact; each kind keeps its own best fulltext
    score (two Lucene indexes score on different scales)."""
    lists = [
        ("vector", "episode", [("e", 0.8)]),
        ("vector", "fact", [("f", 0.2)]),
        ("fulltext", "episode", [("e", 10.0)]),
        ("fulltext", "fact", [("f", 2.0)]),
    ]
    fused = {c.id: c for c in fuse(lists, RecallConfig())}  # type: ignore[arg-type]
    assert fused["e"].fused == pytest.approx(0.7 + 0.3)
    assert fused["f"].fused == pytest.approx(0.7 * 0.2 / 0.8 + 0.3)


def test_proper_names_are_capitalised_words_that_open_no_sentence() -> None:
    assert proper_names("Which concert did Leila go to?") == {"leila"}
    assert proper_names("Who is Oscar's partner?") == {"oscar"}
    assert proper_names("What did I say? Ask Bob.") == {"bob"}
    assert proper_names("I met Ana in Porto") == {"ana", "porto"}
    assert proper_names("where does my sister live") == set()
    assert holds_names({"oscar"}, "Oscar's partner is Tim.")
    assert not holds_names({"ana"}, "Anabel moved to Porto.")
    assert holds_names(set(), "anything")


def test_a_fact_the_fulltext_list_cut_off_is_scored_by_the_lists_last_score() -> None:
    """A fact the vector list found that holds the question's names, when the fulltext list
    of facts is full (the pool), is scored by that list's last score; not when the list is
    short (it did not match at all), not without the names, and episodes never."""
    question = "Which concert did Leila go to?"
    texts = {
        item_id: {"text": text}
        for item_id, text in {
            "gold": "Leila has tickets for Phoebe Bridgers.",
            "other": "Tom has tickets for a concert.",
            "l1": "Leila will go to Lisbon.",
            "l2": "Leila likes to go hiking.",
        }.items()
    }
    lists = [
        ("vector", "fact", [("gold", 0.6), ("other", 0.5), ("l1", 0.4)]),
        ("fulltext", "fact", [("l1", 4.0), ("l2", 3.0)]),
        ("vector", "episode", [("e", 0.5)]),
    ]
    cut = cut_matches(question, lists, texts, pool=2)  # type: ignore[arg-type]
    assert cut == {("fact", "gold"): 3.0}
    assert cut_matches(question, lists, texts, pool=3) == {}  # type: ignore[arg-type]
    assert cut_matches("which concert?", lists, texts, pool=2) == {}  # type: ignore[arg-type]
    fused = {c.id: c for c in fuse(lists, RecallConfig(), None, cut)}  # type: ignore[arg-type]
    assert fused["gold"].fused == pytest.approx(0.7 * 1.0 + 0.3 * 3.0 / 4.0)
    assert fused["gold"].fulltext is None  # the index gave it no score of its own
    assert fused["other"].fused == pytest.approx(0.7 * 0.5 / 0.6)
