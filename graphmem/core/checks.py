"""Checks of call arguments: each bad value becomes one :class:`InvalidInputError` naming it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from graphmem._text import brief
from graphmem.core.recall.ranking import RecallConfig
from graphmem.errors import InvalidInputError
from graphmem.models import (
    MAX_IDS,
    AwareDatetime,
    FactText,
    Id,
    Label,
    check_namespace,
    describe_validation_error,
    one_or_many,
)
from graphmem.models.inputs import Reason

T = TypeVar("T")


def validate(
    model: type[BaseModel], data: Mapping[str, Any], what: str, *, strict: bool | None = None
) -> Any:
    """``model`` from ``data``, with pydantic's errors as one InvalidInputError (``strict``:
    no value converted between types, for a model whose fields are not strict themselves)."""
    try:
        return model.model_validate(data, strict=strict)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {what}: {describe_validation_error(exc)}") from exc


def resolve_config(given: Any, base: RecallConfig, name: str) -> RecallConfig:
    """``given`` as a recall config: ``None`` is ``base``, a mapping changes some of ``base``'s
    fields, and a :class:`RecallConfig` is checked again (one changed with ``model_copy`` or
    built with ``model_construct`` skipped pydantic's checks). No value is converted between
    types: ``"false"`` for a flag, ``True`` or ``60.0`` for an integer are refused."""
    if given is None:
        return base
    if isinstance(given, RecallConfig):
        checked: RecallConfig = validate(RecallConfig, dict(given), name, strict=True)
        return checked
    if isinstance(given, Mapping):
        merged: RecallConfig = validate(RecallConfig, {**dict(base), **given}, name, strict=True)
        return merged
    raise InvalidInputError(f"{name} must be a RecallConfig or a mapping, got {brief(given)}")


M = TypeVar("M", bound=BaseModel)


def as_model(model: type[M], text_field: str, item: M | Mapping[str, Any] | str, what: str) -> M:
    """``item`` as ``model``: given as one, as a mapping of its fields, or as just its text. A
    model instance is checked again: ``model_copy(update=...)`` and ``model_construct`` make
    instances that pydantic never checked."""
    data: Any = item
    if isinstance(item, model):
        data = dict(item)
    elif isinstance(item, str):
        data = {text_field: item}
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"{what}: expected a text, a mapping or a {model.__name__}")
    result: M = validate(model, data, what)
    return result


_AWARE: TypeAdapter[datetime] = TypeAdapter(AwareDatetime)
QUERY_TEXT: TypeAdapter[str] = TypeAdapter(FactText)
_ID: TypeAdapter[str] = TypeAdapter(Id)


def checked_value(adapter: TypeAdapter[T], name: str, value: Any) -> T:
    """``value`` validated by ``adapter``, with pydantic's errors as one InvalidInputError."""
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {name}: {describe_validation_error(exc)}") from exc


def aware(name: str, value: datetime | str | None) -> datetime | None:
    """A time-zone-aware UTC datetime from a datetime or an ISO-8601 string, or None."""
    return None if value is None else checked_value(_AWARE, name, value)


def namespace(ns: str | None, default: str | None) -> str:
    chosen = ns if ns is not None else default
    if chosen is None:
        raise InvalidInputError("no namespace: pass ns=... or give the client a default ns")
    try:
        return check_namespace(chosen)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None


def checked_flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {brief(value)}")
    return value


def checked_integer(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` if it is an int (not a bool) from ``low`` to ``high``, else an
    :class:`InvalidInputError` naming ``name``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise InvalidInputError(f"{name} must be an integer {bounds}, got {brief(value)}")
    return value


def as_list(name: str, value: Any, what: str) -> list[Any]:
    """``value`` as a list: a list, tuple or other iterable (never one string, mapping or
    model, each of which is one item), else an error."""
    if isinstance(value, str | bytes | Mapping | BaseModel) or not isinstance(value, Iterable):
        raise InvalidInputError(f"{name} takes a list of {what}, got {brief(value)}")
    return list(value)


def checked_ids(name: str, ids: Iterable[str]) -> list[str]:
    result = as_list(name, one_or_many(ids), "strings")
    if len(result) > MAX_IDS:
        raise InvalidInputError(f"{name}: at most {MAX_IDS} ids, got {len(result)}")
    return [checked_value(_ID, name, item) for item in result]


_REASON: TypeAdapter[str | None] = TypeAdapter(Reason | None)
_LABEL: TypeAdapter[str] = TypeAdapter(Label)


def checked_reason(value: Any, *, required: bool = False) -> str | None:
    """A reason as ``remember`` takes one (None when absent, unless ``required``)."""
    reason = checked_value(_REASON, "reason", value)
    if required and reason is None:
        raise InvalidInputError("a reason is required")
    return reason


def checked_label(name: str, value: Any) -> str:
    """A source, session or other label: a visible text of at most MAX_LABEL_CHARS."""
    return checked_value(_LABEL, name, value)
