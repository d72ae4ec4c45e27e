"""One request of the REST API as data (:class:`Call`), and the pure steps around it: the
arguments made JSON (times as ISO text), paths that carry a namespace and ids, and each answer
read into the library's result model or raised as the library's error."""

from __future__ import annotations

import functools
import inspect
import math
import operator
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from graphmem._json import load_json
from graphmem.core.checks import checked_ids
from graphmem.errors import ClientUsageError, InvalidInputError, ServiceError
from graphmem.models.wire import raise_error

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: The header of a write's idempotency key (see :mod:`graphmem.service.requests`).
IDEMPOTENCY_KEY = "Idempotency-Key"


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request of ``/v1`` and how its answer becomes the method's result."""

    method: Literal["GET", "POST"]
    #: The path under the server's URL, its parts already quoted.
    path: str
    #: The answer's body (JSON) as the result model.
    read: Callable[[bytes], T]
    #: A JSON body.
    json: Any = None
    #: Query parameters (None values left out).
    params: Mapping[str, Any] | None = None
    #: A body of JSON lines (an import).
    content: bytes | None = None
    #: The caller's progress callback, called once the answer came with the counts that
    #: ``report`` reads from the result (not called when it gives None).
    progress: Callable[..., object] | None = None
    report: Callable[[T], tuple[int, ...] | None] | None = None
    #: Whether the call may change the graph, and whether the server answers it once per
    #: idempotency key, so that sending it again is safe (the table of operations says).
    writes: bool = False
    recorded: bool = False
    #: The idempotency key a write is sent with, the same on each of its retries.
    key: str = field(default_factory=lambda: str(uuid.uuid4()), compare=False)

    def headers(self) -> dict[str, str]:
        """The headers of this call beyond the client's own: its body's type, and a write's
        idempotency key."""
        headers = {IDEMPOTENCY_KEY: self.key} if self.writes else {}
        if self.content is not None:
            headers["Content-Type"] = "application/x-ndjson"
        return headers

    def query(self) -> dict[str, Any]:
        """The query parameters that are set, as text."""
        return {
            k: (str(v).lower() if isinstance(v, bool) else v)
            for k, v in (self.params or {}).items()
            if v is not None
        }

    def progress_args(self, result: T) -> tuple[int, ...] | None:
        """What the progress callback is called with for ``result``; None: not called."""
        if self.progress is None or self.report is None:
            return None
        return self.report(result)


# --- arguments to JSON -----------------------------------------------------------------------
def jsonable(value: Any, name: str) -> Any:
    """``value`` as JSON data: datetimes as ISO 8601 text, tuples and sets as lists, models as
    their fields; InvalidInputError for what JSON cannot carry (a NaN or an infinity too)."""
    try:
        data = to_jsonable_python(value, round_trip=True)
    except PydanticSerializationError as exc:
        raise InvalidInputError(f"{name} cannot be sent to the server as JSON: {exc}") from None
    _check_finite(data, name)
    return data


def _check_finite(data: Any, name: str) -> None:
    """Refuse a NaN or an infinity anywhere in ``data``: JSON has no such numbers."""
    if isinstance(data, float) and not math.isfinite(data):
        raise InvalidInputError(
            f"{name} cannot be sent to the server as JSON: {data} is not a finite number"
        )
    if isinstance(data, Mapping):
        for key, item in data.items():
            _check_finite(item, f"{name}.{key}")
    elif isinstance(data, list):
        for i, item in enumerate(data):
            _check_finite(item, f"{name}[{i}]")


def given(name: str, value: Any) -> dict[str, Any]:
    """``{name: value}`` as JSON data, or nothing when ``value`` is None (the server's
    default)."""
    return {} if value is None else {name: jsonable(value, name)}


def zone_name(zone: tzinfo | str | None, name: str = "timezone") -> str | None:
    """A time zone as the server reads one: an IANA name (``ZoneInfo``'s key), or ``UTC``."""
    if zone is None or isinstance(zone, str):
        return zone
    key = getattr(zone, "key", None)
    if isinstance(key, str):
        return key
    if zone is UTC:
        return "UTC"
    raise InvalidInputError(
        f"{name} must be an IANA zone name (or a ZoneInfo) to be sent to the server, got {zone!r}"
    )


def id_list(name: str, ids: str | Iterable[str] | None) -> list[str] | None:
    """One id or several as a checked list (None stays None)."""
    return None if ids is None else checked_ids(name, ids)


def checked_progress(progress: Any, what: str) -> Callable[..., object] | None:
    """``progress`` when it is a callable or None; else InvalidInputError as the library's."""
    if progress is not None and not callable(progress):
        raise InvalidInputError(f"progress must be a callable taking {what}, or None")
    return progress  # type: ignore[no-any-return]


async def awaited(result: object) -> None:
    """Await what an async client's progress callback returned, when it is awaitable."""
    if inspect.isawaitable(result):
        await result


def refuse_awaitable(result: object) -> None:
    """Refuse what a sync client's progress callback returned when it is awaitable, as the
    library's :class:`~graphmem.client.Memory` does."""
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        raise ClientUsageError(
            "progress returned an awaitable; an async progress callback needs AsyncRemoteMemory"
        )


# --- paths -----------------------------------------------------------------------------------
def quoted(part: str) -> str:
    """One part of a path, quoted."""
    return quote(part, safe="")


def one_id(name: str, value: str) -> str:
    """One id, checked as the library checks ids."""
    (checked,) = checked_ids(name, [value])
    return checked


# --- answers ---------------------------------------------------------------------------------
@functools.cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def model(kind: type[M]) -> Callable[[bytes], M]:
    """Reads an answer as one ``kind``."""
    return kind.model_validate_json


def models(kind: type[M]) -> Callable[[bytes], list[M]]:
    """Reads an answer as a list of ``kind``."""
    adapter = _adapter(list[kind])  # type: ignore[valid-type]
    return adapter.validate_json


def either(*kinds: type[BaseModel]) -> Callable[[bytes], Any]:
    """Reads an answer as whichever of ``kinds`` it is (a fact or an episode)."""
    adapter = _adapter(functools.reduce(operator.or_, kinds))
    return adapter.validate_json


def answer(call: Call[T], status: int, body: bytes) -> T:
    """The result an answer carries; the library's error that an error answer names (see
    :func:`~graphmem.models.wire.raise_error`), or ServiceError for one that cannot be read."""
    if not 200 <= status < 300:
        raise_error(status, error_data(body))
    try:
        return call.read(body)
    except (ValidationError, ValueError) as exc:
        raise ServiceError(
            f"the server's answer to {call.method} {call.path} could not be read "
            f"(is it a graphmem serve of this version?): {_problem(exc)}",
            status=status,
        ) from None


def _problem(exc: ValueError) -> str:
    """The first thing wrong with an answer, on one line."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{where}: {first['msg']}{more}"
    return str(exc)


def error_data(body: bytes) -> Any:
    """An error answer's JSON, or its text when it is not JSON (a proxy's page)."""
    try:
        return load_json(body.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return body.decode("utf-8", "replace")


def export_record(line: str, number: int) -> dict[str, Any] | None:
    """One line of an export's JSON lines as its record (None for a blank line)."""
    if not line.strip():
        return None
    try:
        record = load_json(line)
    except (ValueError, RecursionError) as exc:
        raise ServiceError(f"line {number} of the server's export is not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise ServiceError(f"line {number} of the server's export is not a JSON object")
    return record


__all__ = [
    "IDEMPOTENCY_KEY",
    "Call",
    "answer",
    "awaited",
    "checked_progress",
    "either",
    "error_data",
    "export_record",
    "given",
    "id_list",
    "jsonable",
    "model",
    "models",
    "one_id",
    "quoted",
    "refuse_awaitable",
    "zone_name",
]
