"""Retrieval metrics and the two baselines on hand-made cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphmem_bench.evaluation.baselines import BM25, CosineBaseline, tokenize
from graphmem_bench.evaluation.metrics import (
    best_rank,
    both_present,
    distinct,
    ndcg,
    percentile,
    recall_all,
    recall_any,
    score_question,
    update_outcome,
)


def test_any_and_all_with_several_gold_ids() -> None:
    ranked = ["a", "x", "b", "y", "z"]
    gold = ["a", "b", "c"]
    assert recall_any(ranked, gold, 1) == 1.0
    assert recall_all(ranked, gold, 1) == 0.0
    assert recall_all(ranked, gold, 5) == 0.0  # c is never returned
    assert recall_all(ranked, ["a", "b"], 3) == 1.0
    assert recall_all(ranked, ["a", "b"], 2) == 0.0
    assert recall_any(ranked, ["z"], 4) == 0.0
    assert recall_any(ranked, ["z"], 5) == 1.0


def test_duplicate_hits_count_once_at_their_first_rank() -> None:
    ranked = ["x", "x", "x", "a"]  # distinct list: x, a
    assert distinct(ranked) == ["x", "a"]
    assert recall_any(ranked, ["a"], 2) == 1.0
    assert best_rank(ranked, ["a"]) == 2
    assert ndcg(ranked, ["a"]) == pytest.approx(1 / math.log2(3))


def test_k_larger_than_the_list() -> None:
    assert recall_any(["a"], ["a"], 10) == 1.0
    assert recall_all(["a", "b"], ["b", "a"], 10) == 1.0
    assert recall_any([], ["a"], 10) == 0.0
    assert ndcg([], ["a"]) == 0.0


def test_ndcg_exact_values() -> None:
    assert ndcg(["a", "b"], ["a", "b"]) == pytest.approx(1.0)
    # gold at ranks 2 and 4 of two gold: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg(["x", "a", "y", "b"], ["a", "b"]) == pytest.approx(expected)
    # twelve gold ids: the ideal stops at rank 10, so a perfect top 10 scores 1
    gold = [str(i) for i in range(12)]
    assert ndcg(gold, gold) == pytest.approx(1.0)
    # a gold id past rank 10 earns nothing
    assert ndcg([f"x{i}" for i in range(10)] + ["a"], ["a"]) == 0.0


def test_a_question_without_gold_is_not_scored() -> None:
    assert score_question(["a"], []) is None
    with pytest.raises(ValueError, match="gold"):
        recall_any(["a"], [], 1)
    with pytest.raises(ValueError, match="gold"):
        ndcg(["a"], [])
    score = score_question(["x", "a"], ["a"])
    assert score is not None
    assert score.recall_any == {1: 0.0, 5: 1.0, 10: 1.0}
    assert score.recall_all == {1: 0.0, 5: 1.0, 10: 1.0}


def test_update_outcomes() -> None:
    assert update_outcome(["new", "old"], ["old"], ["new"]) == "updated_above"
    assert update_outcome(["old", "new"], ["old"], ["new"]) == "original_above"
    assert update_outcome(["new"], ["old"], ["new"]) == "updated_above"  # unranked is below
    assert update_outcome(["old"], ["old"], ["new"]) == "original_above"
    assert update_outcome(["x"], ["old"], ["new"]) == "both_missing"
    assert update_outcome(["same"], ["same"], ["same"]) == "tie"
    # best rank of each: the updated id at rank 2 beats the original ids at 3 and 4
    assert update_outcome(["x", "n1", "o1", "o2"], ["o1", "o2"], ["n1"]) == "updated_above"


def test_both_statements_in_the_top_k() -> None:
    assert both_present(["a", "b"], ["a"], ["b"])
    assert not both_present(["a"], ["a"], ["b"])
    assert both_present(["s"], ["s"], ["s"])  # one message holds both statements
    assert not both_present([*"cdefghijkl", "b", "a"], ["a"], ["b"])


def test_percentiles() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0], 95) == pytest.approx(1.95)


def test_tokenizer_lowercases_and_splits_on_non_word_characters() -> None:
    assert tokenize("Flask-Login, v2_beta; naïve CAFÉ!") == [
        "flask",
        "login",
        "v2",
        "beta",
        "naïve",
        "café",
    ]


def test_bm25_matches_a_hand_computation() -> None:
    docs = ["apple banana", "apple apple cherry", "durian"]
    bm25 = BM25(docs)
    n, avgdl, k1, b = 3, 2.0, 1.2, 0.75
    idf_apple = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    idf_cherry = math.log(1 + (n - 1 + 0.5) / (1 + 0.5))

    def term(idf: float, tf: int, length: int) -> float:
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))

    scores = bm25.scores("apple cherry apple")  # a repeated query term counts once
    assert scores[0] == pytest.approx(term(idf_apple, 1, 2))
    assert scores[1] == pytest.approx(term(idf_apple, 2, 3) + term(idf_cherry, 1, 3))
    assert scores[2] == 0.0
    assert bm25.rank("apple cherry", 10) == [1, 0]  # durian shares no term: not returned
    assert bm25.rank("durian", 10) == [2]
    assert bm25.rank("nothing", 10) == []


def test_bm25_prefers_the_rare_term() -> None:
    docs = ["the cat sat", "the dog sat", "the zebra sat"]
    assert BM25(docs).rank("the zebra", 1) == [2]


def test_cosine_baseline_ranks_by_angle_and_ignores_length() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 5.0], [1.0, 1.0]])
    cosine = CosineBaseline(vectors)
    assert cosine.rank([0.0, 1.0], 3) == [1, 2, 0]
    assert cosine.rank([2.0, 0.1], 2) == [0, 2]
    assert cosine.scores([1.0, 1.0])[2] == pytest.approx(1.0)
    assert cosine.rank([1.0, 0.0], 10) == [0, 2, 1]  # k larger than the corpus
    with pytest.raises(ValueError, match="matrix"):
        CosineBaseline(np.zeros(3))
