"""A fact's importance score, computed when it is read, and the tier thresholds that use it.

The score mixes three things (see ``docs/guides/importance.md``)::

    score = importance * max(decay, floor) * reinforcement
    decay = exp(-idle_days / decay_days)          # idle: since the fact was last used
    reinforcement = 1 + reinforcement_weight * ln(1 + access_count)

``importance`` is the caller's (0 to 1), else ``default``; ``idle_days`` counts from the
later of when the fact was recorded and when a recall or context last returned it; ``floor``
is the caller's importance when the caller gave one (what the agent said matters does not fade
below what it said), else 0. A pinned fact is always hot and its score is not used.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Seconds in a day.
_DAY = 86_400.0


class ImportanceConfig(BaseModel):
    """The score's parameters and the tiers' thresholds; immutable, set per client."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    #: The importance of a fact remembered without one.
    default: float = Field(default=0.5, ge=0.0, le=1.0)
    #: Days of disuse after which recency counts 1/e (about 37%).
    decay_days: float = Field(default=30.0, gt=0, le=36_500)
    #: How much each use adds, on a log scale of the access count.
    reinforcement_weight: float = Field(default=0.25, ge=0.0, le=10.0)
    #: The score from which a fact is promoted to the hot tier.
    hot_score: float = Field(default=0.8, gt=0.0, le=100.0)
    #: The most facts the hot tier holds beside the pinned ones (the best scores win).
    hot_max_facts: int = Field(default=20, ge=0, le=1000)
    #: The most tokens (words and punctuation, counted roughly) the hot facts' texts may hold.
    hot_max_tokens: int = Field(default=400, ge=0, le=100_000)
    #: The score below which a fact fades to the cold tier.
    cold_score: float = Field(default=0.05, ge=0.0, le=100.0)


def importance_score(
    importance: float | None,
    recorded_at: datetime,
    last_accessed_at: datetime | None,
    access_count: int | None,
    now: datetime,
    config: ImportanceConfig,
) -> float:
    """The score of a fact with these properties at ``now`` (see the module's formula)."""
    used = recorded_at if last_accessed_at is None else max(recorded_at, last_accessed_at)
    idle = (now - used).total_seconds() / _DAY
    return idle_score(importance, idle, access_count, config)


def idle_score(
    importance: float | None, idle_days: float, access_count: int | None, config: ImportanceConfig
) -> float:
    """:func:`importance_score` of a fact last used ``idle_days`` ago."""
    base = config.default if importance is None else float(importance)
    decay = math.exp(-max(0.0, idle_days) / config.decay_days)
    floor = 0.0 if importance is None else float(importance)
    uses = max(0, access_count or 0)
    reinforcement = 1.0 + config.reinforcement_weight * math.log1p(uses)
    return round(base * max(decay, floor) * reinforcement, 6)


def fact_score(fact: Any, now: datetime, config: ImportanceConfig) -> float:
    """:func:`importance_score` of a :class:`~graphmem.models.Fact` (or any object with its
    ``importance``, ``recorded_at``, ``last_accessed_at`` and ``access_count``)."""
    return importance_score(
        fact.importance,
        fact.recorded_at,
        fact.last_accessed_at,
        fact.access_count,
        now,
        config,
    )
