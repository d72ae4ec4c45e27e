"""Input checks of the write path that need no database: a value that repeats one list or
object many times over is refused as quickly as a plain value of the same size, and a value
of any size or type is named briefly in the error, as is a metadata string that is not valid
Unicode."""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

import pytest

from graphmem.core.checks import as_model
from graphmem.core.memory_core import MemoryCore
from graphmem.errors import InvalidInputError
from graphmem.models import FactInput, Message


def _shared(depth: int) -> list[Any]:
    """A list of ``depth`` levels whose every level holds the level below twice: a few dozen
    objects in memory, but 2**depth values once written out."""
    value: list[Any] = []
    for _ in range(depth):
        value = [value, value]
    return value


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (FactInput, {"text": "shared", "metadata": {"a": _shared(23)}}),
        (Message, {"content": "shared", "metadata": {"a": _shared(23)}}),
    ],
)
def test_metadata_that_repeats_one_list_is_refused_by_its_size_at_once(
    model: type[FactInput | Message], fields: dict[str, Any]
) -> None:
    started = time.perf_counter()
    with pytest.raises(InvalidInputError, match="over 16384 bytes"):
        as_model(model, "text", fields, "input")
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    "fields",
    [
        {"text": _shared(25)},
        {"text": "shared", "tags": [_shared(25)]},
        {"text": "shared", "valid_from": _shared(25)},
        # More digits than Python turns into text: repr() itself would raise ValueError.
        {"text": 10**5000},
        {"text": "flag", "pinned": 10**5000},
        {"text": "key", "metadata": {"a": {10**5000: 1}}},
        {"text": "key", "metadata": {"a": {tuple(range(1_000_000)): 1}}},
    ],
)
def test_a_wrong_type_that_repeats_one_list_is_named_briefly_and_at_once(
    fields: dict[str, Any],
) -> None:
    started = time.perf_counter()
    with pytest.raises(InvalidInputError) as refused:
        as_model(FactInput, "text", fields, "fact")
    assert time.perf_counter() - started < 2.0
    assert len(str(refused.value)) < 400


@pytest.mark.parametrize(
    ("metadata", "named"),
    [
        (
            {"\udcff": 1},
            "metadata key '\\udcff': not valid Unicode: a lone surrogate ('\\udcff') at position 0",
        ),
        (
            {"k": [{"deep": ["x", "y\ud800z"]}]},
            "metadata value 'y\\ud800z': not valid Unicode: a lone surrogate ('\\ud800') "
            "at position 1",
        ),
    ],
)
def test_a_lone_surrogate_in_metadata_is_named_with_its_position_in_its_own_string(
    metadata: dict[str, Any], named: str
) -> None:
    for model, field in ((FactInput, "text"), (Message, "content")):
        with pytest.raises(InvalidInputError) as refused:
            as_model(model, field, {field: "meta", "metadata": metadata}, "input")
        assert named in str(refused.value)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"min_score": 10**5000}, "min_score must lie in [0, 1], got <an int of about 5000"),
        ({"min_score": Fraction(10**5000, 3)}, "min_score must lie in [0, 1], got <Fraction"),
        ({"ns": 10**5000}, "namespace <an int of about 5000 digits> is not allowed"),
        ({"ns": "x y" * 1_000_000}, "namespace 'x yx yx y"),
    ],
)
def test_a_recall_argument_of_any_size_is_named_briefly(
    options: dict[str, Any], named: str
) -> None:
    plan = MemoryCore(dimension=3, default_ns="default").recall("q", **{"ns": None, **options})
    with pytest.raises(InvalidInputError) as refused:
        next(plan)
    assert str(refused.value).startswith(named) and len(str(refused.value)) < 400
