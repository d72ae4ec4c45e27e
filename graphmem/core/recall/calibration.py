"""The score a hit is ranked and reported by: the probability that it answers the question.

Fusion (:mod:`.ranking`) tells which candidate of one question is better than another, but its
scale is the question's own: the best candidate always scores about 1, whether it answers or
is the least bad of noise. A hit's **score** is instead a logistic model of what recall knows
about it,

    score = 1 / (1 + exp(-(intercept + sum(weight[f] * feature[f]))))

over these features, each in [0, 1] and each one that makes a hit more likely to answer when
it grows (their weights are at least 0, so the score is monotone in every one):

* ``cosine``: the cosine similarity of the hit to the question (below 0 counts as 0);
* ``vector_share``: that cosine divided by the best one among the question's candidates;
* ``fulltext_share``: the fulltext score divided by the best one of the hit's kind (0 when the
  text did not match);
* ``lexical``: the share of the question's content words in the hit's text;
* ``next``: the credit from the next message of its session (:func:`.ranking.credit_next`);
* ``user_cue``: 1 for a user's message when the question is in the first person;
* ``time_cue``: 1 for a hit sent or recorded in a period the question names (for a fact, also
  one valid in it).

The fit (:data:`CALIBRATION_FILE`, kept beside this module) was made on the development sets
(``docs/evaluation.md``) as the probability that a hit is one of the question's gold messages,
and ``graphmem eval fit`` makes it again from an evaluation's results. So a score of 0.6 means
that about six in ten hits scored so answered their question there, whatever the question:
scores compare across questions, and ``min_score`` gates on them.

Recency and importance (when recall weighs it) multiply the odds: the logit gains the logarithm
of their factors, so a hit they favour rises, and the score stays a probability.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

#: The features of the model, in the order the fit file lists them.
FEATURES = ("final", "cosine", "lexical")

#: The fit shipped with graphmem, beside this module.
CALIBRATION_FILE = "calibration.json"


@dataclass(frozen=True)
class Calibration:
    """A fitted logistic model of a hit's features (see the module docstring)."""

    intercept: float
    weights: Mapping[str, float]
    #: What it was fitted on, for the record (data sets, hits, date).
    fitted_on: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(FEATURES)
        if unknown:
            raise ValueError(f"calibration weights for unknown features: {sorted(unknown)}")
        negative = [name for name, w in self.weights.items() if not w >= 0]
        if negative or not math.isfinite(self.intercept):
            raise ValueError(f"calibration weights must be finite and at least 0: {negative}")

    def logit(self, features: Mapping[str, float]) -> float:
        return self.intercept + sum(
            weight * features.get(name, 0.0) for name, weight in self.weights.items()
        )

    def score(self, features: Mapping[str, float], odds: float = 1.0) -> float:
        """The probability for ``features``, its odds multiplied by ``odds`` (recency, and
        importance when recall weighs it); 0 when ``odds`` is 0."""
        if odds <= 0:
            return 0.0
        return probability(self.logit(features) + math.log(odds))

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Calibration:
        weights = data["weights"]
        if not isinstance(weights, Mapping):
            raise ValueError("calibration 'weights' must be an object")
        intercept = data["intercept"]
        if not isinstance(intercept, int | float):
            raise ValueError("calibration 'intercept' must be a number")
        return cls(
            float(intercept),
            {str(k): float(v) for k, v in weights.items()},
            str(data.get("fitted_on", "")),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "intercept": self.intercept,
            "weights": dict(self.weights),
            "fitted_on": self.fitted_on,
        }


def probability(logit: float) -> float:
    """The logistic function, without overflow for a very negative logit."""
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    odds = math.exp(logit)
    return odds / (1.0 + odds)


def shipped_path() -> Path:
    """Where the shipped fit lies (in a source checkout: the file ``graphmem eval fit``
    replaces)."""
    return Path(str(resources.files(__package__).joinpath(CALIBRATION_FILE)))


@cache
def shipped() -> Calibration:
    """The fit shipped with graphmem."""
    text = resources.files(__package__).joinpath(CALIBRATION_FILE).read_text("utf-8")
    return Calibration.from_json(json.loads(text))
