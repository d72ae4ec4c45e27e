"""The importance score, the caller's importance on remember, and how recall weighs it."""

from __future__ import annotations

import math
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from graphmem.client.base import settings_recall_config
from graphmem.core.importance import ImportanceConfig, fact_score, importance_score
from graphmem.core.recall.ranking import ImportanceWeighing, RecallConfig, importance_factor
from graphmem.models import Fact, FactInput
from graphmem.settings import load_settings

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
CONFIG = ImportanceConfig()


def _days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def _score(
    importance: float | None,
    recorded_days_ago: float = 0.0,
    accessed_days_ago: float | None = None,
    access_count: int | None = 0,
    config: ImportanceConfig = CONFIG,
) -> float:
    accessed = None if accessed_days_ago is None else _days_ago(accessed_days_ago)
    return importance_score(
        importance, _days_ago(recorded_days_ago), accessed, access_count, NOW, config
    )


def test_a_fresh_fact_without_importance_scores_the_default() -> None:
    assert _score(None) == 0.5
    assert _score(None, config=ImportanceConfig(default=0.3)) == 0.3


def test_a_fresh_fact_scores_its_own_importance() -> None:
    assert _score(0.9) == 0.9
    assert _score(0) == 0.0
    assert _score(1) == 1.0


def test_disuse_decays_the_score_by_e_every_decay_days() -> None:
    assert _score(None, recorded_days_ago=30) == pytest.approx(0.5 / math.e, abs=1e-6)
    assert _score(None, recorded_days_ago=60) == pytest.approx(0.5 / math.e**2, abs=1e-6)
    short = ImportanceConfig(decay_days=10)
    assert _score(None, recorded_days_ago=30, config=short) == pytest.approx(
        0.5 / math.e**3, abs=1e-6
    )
    assert _score(None, recorded_days_ago=3650) == 0.0


def test_an_explicit_importance_is_a_floor_for_the_decay() -> None:
    # importance * max(decay, importance): what the caller said matters does not fade below it.
    assert _score(0.8, recorded_days_ago=3650) == pytest.approx(0.64)
    assert _score(0.8, recorded_days_ago=1) == pytest.approx(0.8 * math.exp(-1 / 30), abs=1e-6)
    # A small importance is a small floor: that fact fades nearly as a default one does.
    assert _score(0.1, recorded_days_ago=3650) == pytest.approx(0.01)


def test_idle_time_counts_from_the_last_access_when_later() -> None:
    assert _score(None, recorded_days_ago=300, accessed_days_ago=0) == 0.5
    assert _score(None, recorded_days_ago=300, accessed_days_ago=30) == pytest.approx(
        0.5 / math.e, abs=1e-6
    )
    # An access stamp before the recording (not one graphmem writes) does not age the fact.
    assert _score(None, recorded_days_ago=0, accessed_days_ago=30) == 0.5
    # A time after now (a clock ahead) counts as no idle time, never as a gain.
    assert _score(None, recorded_days_ago=-5) == 0.5


def test_access_reinforces_on_a_log_scale() -> None:
    assert _score(None, access_count=1) == pytest.approx(0.5 * (1 + 0.25 * math.log(2)))
    assert _score(None, access_count=99) == pytest.approx(0.5 * (1 + 0.25 * math.log(100)))
    assert _score(0.5, access_count=1000) > 1.0  # reinforced past 1: the score is not capped
    assert _score(None, access_count=None) == _score(None, access_count=0) == 0.5
    assert _score(None, access_count=-3) == 0.5
    off = ImportanceConfig(reinforcement_weight=0)
    assert _score(None, access_count=1000, config=off) == 0.5


def test_the_score_of_a_fact_model_reads_its_properties() -> None:
    fact = Fact(
        id="f",
        ns="n",
        text="t",
        status="active",
        recorded_at=_days_ago(30),
        text_hash="h",
        importance=0.9,
        access_count=3,
        last_accessed_at=_days_ago(0),
    )
    assert fact_score(fact, NOW, CONFIG) == _score(0.9, 30, 0, 3)
    assert fact_score(fact.model_copy(update={"importance": None}), NOW, CONFIG) == _score(
        None, 30, 0, 3
    )


@pytest.mark.parametrize("value", [0, 1, 0.0, 0.25, 1.0])
def test_remember_takes_an_importance_from_0_to_1(value: float) -> None:
    assert FactInput(text="x", importance=value).importance == value
    assert FactInput(text="x").importance is None


@pytest.mark.parametrize(
    "value", [True, False, "0.5", float("nan"), float("inf"), -0.01, 1.01, [0.5], {}]
)
def test_remember_refuses_an_importance_that_is_not_a_number_from_0_to_1(value: object) -> None:
    with pytest.raises(ValidationError, match="importance"):
        FactInput(text="x", importance=value)  # type: ignore[arg-type]


def test_the_importance_factor_is_one_at_the_default_and_never_negative() -> None:
    on = RecallConfig(importance_weight=1.0)
    assert importance_factor(0.5, 0.5, on) == 1.0
    assert importance_factor(0.9, 0.5, on) == pytest.approx(1.4)
    assert importance_factor(0.1, 0.5, on) == pytest.approx(0.6)
    strong = RecallConfig(importance_weight=4.0)
    assert importance_factor(0.0, 0.5, strong) == 0.0  # 1 + 4 * -0.5 = -1, clipped
    assert importance_factor(1.0, 0.5, strong) == pytest.approx(3.0)
    off = RecallConfig()
    assert off.importance_weight == 0.0
    assert importance_factor(0.0, 0.5, off) == importance_factor(2.0, 0.5, off) == 1.0


@pytest.mark.parametrize("weight", [-0.1, 10.5, float("nan"), float("inf")])
def test_the_importance_weight_is_a_finite_number_from_0_to_10(weight: float) -> None:
    with pytest.raises(ValidationError):
        RecallConfig(importance_weight=weight)


def test_the_setting_gives_the_client_its_importance_weight(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in list(os.environ):
        if name.startswith("GRAPHMEM_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no stray .env
    assert settings_recall_config(load_settings()).importance_weight == 0.0
    monkeypatch.setenv("GRAPHMEM_RECALL_IMPORTANCE_WEIGHT", "0.5")
    assert settings_recall_config(load_settings()).importance_weight == 0.5


def test_recall_scores_a_candidate_from_what_the_search_read() -> None:
    weighing = ImportanceWeighing(CONFIG, NOW)
    accessed = int(_days_ago(30).timestamp() * 1000)
    use = {"importance": 0.9, "access_count": 2, "accessed": accessed}
    assert weighing.score(use, _days_ago(60)) == _score(0.9, 60, 30, 2)
    # A fact without those properties (or an unknown successor) scores as a default one.
    none = {"importance": None, "access_count": None, "accessed": None}
    assert weighing.score(none, _days_ago(0)) == weighing.score(None, _days_ago(0)) == 0.5
