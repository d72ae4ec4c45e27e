"""Fit recall's score calibration (:mod:`graphmem.core.recall.calibration`) to an evaluation's
hits: a logistic regression of "the hit is one of the question's gold messages" on the
features the calibration reads, each weight held at 0 or above so that the score stays monotone
in every feature.

The rows come from :func:`graphmem_bench.evaluation.calibration.hit_rows`, of one configuration
(``gate-off`` by default: the default's hits without the gate, so that the fit sees the low
scores the gate would drop). Hits an update placed above another (their score was raised, not
computed) are left out. ``graphmem eval fit RESULTS`` writes the fit where recall reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from graphmem import InvalidInputError
from graphmem.testing import CALIBRATION_FEATURES as FEATURES
from graphmem.testing import Calibration, calibration_path
from graphmem_bench.evaluation.calibration import hit_rows

#: The features' names in a hit row: the calibration's cosine is the breakdown's ``vector``.
_COLUMNS = {"final": "final", "cosine": "vector", "lexical": "lexical"}


def feature_rows(rows: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """The features (one row per hit, :data:`FEATURES` order) and the gold labels of ``rows``,
    leaving out hits placed above another by an update."""
    x, y = [], []
    for row in rows:
        if row.get("placed_above"):
            continue
        values = [float(row.get(_COLUMNS[name]) or 0.0) for name in FEATURES]
        values[FEATURES.index("cosine")] = max(values[FEATURES.index("cosine")], 0.0)
        x.append(values)
        y.append(1.0 if row["gold"] else 0.0)
    return np.asarray(x, dtype=float).reshape(-1, len(FEATURES)), np.asarray(y, dtype=float)


def _logistic(x: np.ndarray, y: np.ndarray, l2: float, iterations: int = 60) -> np.ndarray:
    """Newton's method for an L2-regularised logistic regression (intercept not penalised)."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(xb.shape[1])
    penalty = l2 * np.eye(len(beta))
    penalty[0, 0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ beta, -50, 50)))
        gradient = xb.T @ (p - y) + penalty @ beta
        hessian = (xb * (p * (1 - p))[:, None]).T @ xb + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.max(np.abs(step)) < 1e-9:
            break
    return beta


def fit(rows: Sequence[Mapping[str, Any]], *, l2: float = 1e-3, label: str = "") -> Calibration:
    """The calibration fitted to ``rows`` (see the module docstring). A feature whose weight
    comes out below 0 is dropped and the rest fitted again, so every weight is at least 0."""
    x, y = feature_rows(rows)
    if len(y) < 100 or y.min() == y.max():
        raise InvalidInputError(
            f"a calibration needs at least 100 hits, gold and not; got {len(y)} "
            f"({int(y.sum())} gold)"
        )
    kept = list(range(len(FEATURES)))
    while True:
        beta = _logistic(x[:, kept], y, l2)
        negative = [i for i, w in zip(kept, beta[1:], strict=True) if w < 0]
        if not negative:
            break
        kept.remove(min(negative, key=lambda i: beta[1 + kept.index(i)]))
    weights = {FEATURES[i]: round(float(w), 4) for i, w in zip(kept, beta[1:], strict=True)}
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    return Calibration(
        round(float(beta[0]), 4),
        weights,
        f"{label + ', ' if label else ''}{len(y)} hits ({int(y.sum())} gold), fitted {when}",
    )


def fit_results(results: Mapping[str, Any], configuration: str = "gate-off") -> Calibration:
    """The calibration fitted to the hits of ``configuration`` in a run's results (as
    ``results.json`` holds them), the development sets' only: a held-out set is never
    fitted on."""
    held = {s["name"] for s in results.get("sets", []) if s.get("held_out")}
    rows = [r for r in hit_rows(results, configuration) if r["set"] not in held]
    names = sorted({r["set"] for r in rows})
    return fit(rows, label=f"{configuration} hits of {', '.join(names)}")


def write(calibration: Calibration, path: Path | None = None) -> Path:
    """Write the fit as recall reads it (by default over the shipped one); returns the path."""
    path = path or calibration_path()
    path.write_text(json.dumps(calibration.to_json(), indent=2) + "\n", encoding="utf-8")
    return path
