"""The calibration fit of `graphmem eval fit`: a logistic regression with every weight at 0 or
above, on the hits of one configuration of the development sets."""

from __future__ import annotations

import random

import pytest

from graphmem import InvalidInputError
from graphmem_bench.evaluation.fit import feature_rows, fit


def _rows(n: int = 2000, seed: int = 3) -> list[dict[str, object]]:
    """Hits whose chance of being gold grows with the rank score and falls with nothing."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        final, vector, lexical = rng.random() * 1.5, rng.uniform(-0.2, 0.9), rng.random()
        chance = 1 / (1 + 2.718 ** -(-4 + 4 * final + 2 * lexical))
        rows.append(
            {"final": final, "vector": vector, "lexical": lexical, "gold": rng.random() < chance}
        )
    return rows


def test_the_fit_recovers_the_signs_and_keeps_every_weight_at_zero_or_above() -> None:
    calibration = fit(_rows(), label="test")
    assert calibration.weights["final"] > 2 and calibration.weights["lexical"] > 1
    assert all(w >= 0 for w in calibration.weights.values())
    assert calibration.intercept < -2 and "test" in calibration.fitted_on
    low = calibration.score({"final": 0.1, "cosine": 0.1, "lexical": 0.0})
    high = calibration.score({"final": 1.4, "cosine": 0.1, "lexical": 1.0})
    assert 0 < low < high < 1


def test_placed_hits_are_left_out_and_too_few_hits_are_refused() -> None:
    rows = _rows(200)
    placed = [dict(r, placed_above="x") for r in rows]
    x, y = feature_rows(rows + placed)
    assert len(y) == 200 and x.shape == (200, 3) and (x[:, 1] >= 0).all()
    with pytest.raises(InvalidInputError, match="at least 100 hits"):
        fit(rows[:50])
