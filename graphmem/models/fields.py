"""The field types, limits and checks the models share (see :mod:`graphmem.models`)."""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
)

from graphmem._text import brief
from graphmem._zones import named_zone

NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
MAX_TEXT_CHARS = 10_000
MAX_EPISODE_CHARS = 100_000
MAX_LABEL_CHARS = 256
MAX_TAGS = 32
MAX_METADATA_BYTES = 16_384
MAX_METADATA_DEPTH = 32
MAX_IDS = 1_000
MAX_K = 200
#: The most items (messages, facts) one call over the network may carry, and the most UTF-8
#: bytes of text in them: the MCP server and the REST service refuse bigger calls at once
#: (the Python API takes any batch, written in transactions of its batch size).
MAX_CALL_ITEMS = 1_000
MAX_CALL_BYTES = 4 * 1024 * 1024

_NAMESPACE = re.compile(NAMESPACE_PATTERN)

FactStatus = Literal["active", "superseded", "merged", "retracted"]
Kind = Literal["fact", "episode"]


def describe_validation_error(exc: ValidationError) -> str:
    """Pydantic's errors as one line: ``field: message; field: message``."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        if not where.isprintable() or len(where) > 80:  # a key of the input, shown safely
            where = f"{where!r:.80}"
        message = err["msg"].removeprefix("Value error, ")
        if where and err["type"] not in ("value_error", "assertion_error", "missing"):
            # pydantic's own messages ("Input should be a valid string") omit the value.
            message += f", got {brief(err['input'])}"
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


# --- reusable field types -----------------------------------------------------------------------
def native_time(value: Any) -> Any:
    """Neo4j's DateTime to Python's datetime, in Python's own UTC (the driver gives pytz's, and
    passed back as a parameter that is stored and compared as the zone id UTC, which Neo4j
    orders after the same instant written with the offset Z that graphmem writes); anything
    else unchanged."""
    to_native = getattr(value, "to_native", None)
    if not callable(to_native):
        return value
    native = to_native()
    if isinstance(native, datetime) and native.tzinfo is not None:
        return native.astimezone(UTC)
    return native


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


#: A time followed by its zone's IANA name in brackets, as Neo4j writes one:
#: '2026-03-15T10:00:00+00:00[Europe/Lisbon]', or without the offset.
_ZONE_ID = re.compile(r"(?P<time>[^\[\]]+)\[(?P<zone>[^\[\]]+)\]")
_DATETIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def _zoned_time(text: str) -> datetime | None:
    """The time a string with a bracketed zone id names, read as Neo4j reads it: a local time
    in that zone (in a gap, moved on by the gap; in an overlap, the earlier of the two), or, with
    an offset, that instant, which must be the zone's offset at that time. None for a string
    without one."""
    match = _ZONE_ID.fullmatch(text.strip())
    if match is None:
        return None
    zone = named_zone(match["zone"])
    not_a_time = ValueError(
        f"{brief(text)} is not an ISO-8601 time before its zone id, such as "
        "'2026-03-01T09:00:00[Europe/Lisbon]'"
    )
    if _is_number(match["time"]):
        raise not_a_time
    try:
        given = _DATETIME.validate_python(match["time"])
    except ValidationError:
        raise not_a_time from None
    if given.tzinfo is None:
        return given.replace(tzinfo=zone)
    try:
        zoned = given.astimezone(zone)
    except OverflowError:
        # The instant falls past year 9999 (or before year 1) on that zone's clock, so the
        # offset given cannot be the zone's there: report the one its wall time has.
        zoned = given.replace(tzinfo=zone)
    if zoned.utcoffset() != given.utcoffset():
        raise ValueError(
            f"the offset of {brief(text)} is not the zone's: {match['zone']} was "
            f"{_offset(zoned)} at that time"
        )
    return zoned


def _offset(moment: datetime) -> str:
    offset = moment.utcoffset()
    minutes = round(offset.total_seconds() / 60) if offset is not None else 0
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


#: How the times graphmem accepts are described in errors and help texts.
TIME_FORMS = (
    "an ISO-8601 time with a zone ('2026-03-01T09:00:00Z'), a date ('2026-03-01', midnight "
    "UTC), 'now', 'today', 'yesterday' or 'N seconds|minutes|hours|days|weeks ago'"
)
_AGO = re.compile(r"(\d{1,6})\s*(second|minute|hour|day|week)s?\s+ago")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}


def friendly_time(text: str, now: datetime | None = None) -> datetime | None:
    """``text`` as a time when it is one of the friendly forms (``now``, ``today``,
    ``yesterday``, ``N units ago``, a date alone as midnight UTC), counted from ``now``
    (default: this machine's clock); None for any other text (ISO 8601 is read elsewhere)."""
    words = text.strip().lower()
    clock = now or datetime.now(UTC)
    today = clock.replace(hour=0, minute=0, second=0, microsecond=0)
    if words == "now":
        return clock
    if words == "today":
        return today
    if words == "yesterday":
        return today - timedelta(days=1)
    ago = _AGO.fullmatch(words)
    if ago is not None:
        try:
            return clock - timedelta(seconds=int(ago.group(1)) * _UNITS[ago.group(2)])
        except OverflowError:
            raise ValueError(f"{brief(text)} lies before the year 1") from None
    if _DATE.fullmatch(words):
        try:
            day = date.fromisoformat(words)
        except ValueError:
            raise ValueError(f"{brief(text)} is not a date") from None
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    return None


def _datetime_or_text(value: Any) -> Any:
    """A datetime, an ISO-8601 string or one of the friendly forms (:func:`friendly_time`) is
    a time. A bare number, or a string of one ('20250101', '.5', '1e9'), is refused: pydantic
    would read it as Unix time, so '20250101' would become a day in 1970. A string may end in
    a bracketed zone id, as Neo4j writes times."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str) and not _is_number(value):
        friendly = friendly_time(value)
        if friendly is not None:
            return friendly
        return _zoned_time(value) or value
    raise ValueError(f"expected a time: {TIME_FORMS}; got {brief(value)}")


def _aware_utc(value: datetime) -> datetime:
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError(
            "naive datetime (a time of day without a zone): give it a zone, as in "
            "'2026-03-01T09:00:00Z' or '+01:00' (in Python, a datetime with tzinfo), or give "
            "a date alone (midnight UTC) or '3 days ago'"
        )
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{value.isoformat()} lies outside the years 1 to 9999 in UTC") from None


def _unicode_text(value: str) -> str:
    """A string Neo4j can store: valid Unicode, so no lone surrogate."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"not valid Unicode: a lone surrogate ({value[exc.start]!r}) at position {exc.start}"
        ) from None
    return value


def check_namespace(value: str) -> str:
    if not isinstance(value, str) or not _NAMESPACE.fullmatch(value):
        raise ValueError(
            f"namespace {brief(value)} is not allowed: use 1 to 128 ASCII letters, digits and "
            ". _ - : @, starting with a letter or digit"
        )
    return value


# Characters that show nothing on their own: controls, format characters (zero-width spaces,
# joiners, byte-order marks, direction marks), separators, combining marks, and the Hangul and
# Braille fillers that are letters or symbols in name only. The embedder's tokenizer drops
# them, so a text made of them alone is embedded as an empty input that resembles everything.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me"})
_FILLERS = frozenset("\u115f\u1160\u2800\u3164\uffa0")


def is_blank(value: str) -> bool:
    """Whether ``value`` has no character that shows: empty, whitespace, or only characters
    such as zero-width spaces, controls and fillers."""
    return all(c in _FILLERS or unicodedata.category(c) in _INVISIBLE_CATEGORIES for c in value)


def text_type(limit: int, noun: str = "text") -> Any:
    """Not blank (see :func:`is_blank`), and at most ``limit`` characters."""

    def check(value: str) -> str:
        if is_blank(value):
            raise ValueError(f"{noun} is empty or has no visible character")
        if len(value) > limit:
            raise ValueError(f"{noun} has {len(value)} characters; the maximum is {limit}")
        return value

    return AfterValidator(check)


def _metadata_text(role: str, text: str) -> None:
    """A metadata key or string value Neo4j can store, named in the error by itself (the
    position is the one in that string, not in the metadata's JSON form)."""
    try:
        _unicode_text(text)
    except ValueError as exc:
        raise ValueError(f"metadata {role} {brief(text)}: {exc}") from None


def _check_metadata_shape(value: dict[str, Any]) -> None:
    """String keys at every level, valid Unicode in every key and string, and at most
    :data:`MAX_METADATA_DEPTH` levels of objects and arrays, checked without recursion (a
    deeper value would overflow the JSON encoder's stack, or the decoder's when the fact is
    read back). Every value takes at least one byte of JSON, so more than
    :data:`MAX_METADATA_BYTES` of them is over the size limit: refused before encoding, which
    for a value that holds one list many times over would take time and memory exponential in
    its depth."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    values = 0
    while stack:
        item, depth = stack.pop()
        values += 1
        if values > MAX_METADATA_BYTES:
            raise ValueError(f"metadata is over {MAX_METADATA_BYTES} bytes once encoded as JSON")
        if isinstance(item, str):
            _metadata_text("value", item)
        if not isinstance(item, dict | list | tuple):
            continue
        if depth > MAX_METADATA_DEPTH:
            raise ValueError(
                f"metadata is nested more than {MAX_METADATA_DEPTH} objects or arrays deep"
            )
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    raise ValueError(f"metadata keys must be strings, not {brief(key)}")
                _metadata_text("key", key)
            stack.extend((child, depth + 1) for child in item.values())
        else:
            stack.extend((child, depth + 1) for child in item)


def _metadata(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    _check_metadata_shape(value)
    try:
        encoded = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"metadata must be JSON-serialisable: {exc}") from exc
    if len(encoded.encode()) > MAX_METADATA_BYTES:
        raise ValueError(f"metadata is over {MAX_METADATA_BYTES} bytes once encoded as JSON")
    return value


def _tags(value: tuple[str, ...]) -> tuple[str, ...]:
    unique = tuple(dict.fromkeys(value))
    if len(unique) > MAX_TAGS:
        raise ValueError(f"at most {MAX_TAGS} distinct tags, got {len(unique)}")
    return unique


def one_or_many(value: Any) -> Any:
    """A lone string is one item, not a sequence of characters."""
    return (value,) if isinstance(value, str) else value


AwareDatetime = Annotated[datetime, BeforeValidator(_datetime_or_text), AfterValidator(_aware_utc)]


def _absolute(value: Any) -> Any:
    """Refuses the forms counted from the clock (``now``, ``today``, ``yesterday``,
    ``N units ago``): a time stored with a record that may be sent again must mean the same
    moment each time it is sent."""
    relative = isinstance(value, str) and not _DATE.fullmatch(value.strip())
    if relative and friendly_time(value) is not None:
        raise ValueError(
            f"{brief(value)} is counted from the clock, so the same message sent again "
            "would get another time: give an ISO 8601 time with a zone or a date"
        )
    return value


#: :data:`AwareDatetime` without the relative forms: a fixed moment.
AbsoluteDatetime = Annotated[AwareDatetime, BeforeValidator(_absolute)]
StoredDatetime = Annotated[datetime, BeforeValidator(native_time)]
Namespace = Annotated[str, AfterValidator(check_namespace)]
#: A string as given: no bytes or other types converted, valid Unicode.
Text = Annotated[str, Strict(), AfterValidator(_unicode_text)]
FactText = Annotated[Text, text_type(MAX_TEXT_CHARS)]
EpisodeText = Annotated[Text, text_type(MAX_EPISODE_CHARS)]
Label = Annotated[Text, text_type(MAX_LABEL_CHARS, "value")]
Id = Label
Tags = Annotated[
    # Each tag is checked as recall's tags filter checks it: one it refuses could never match.
    tuple[Label, ...],
    BeforeValidator(one_or_many),
    AfterValidator(_tags),
]
Ids = Annotated[tuple[Id, ...], Field(max_length=MAX_IDS), BeforeValidator(one_or_many)]
Metadata = Annotated[dict[str, Any] | None, AfterValidator(_metadata)]
#: How much a fact matters, as the caller says: a finite number from 0 to 1 (an int such as 1
#: counts; a bool or text does not).
Importance = Annotated[float, Strict(), Field(ge=0.0, le=1.0, allow_inf_nan=False)]


def metadata_from_graph(value: Any) -> Any:
    if isinstance(value, str):
        return json.loads(value)
    return value


class InputModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class OutputModel(BaseModel):
    model_config = ConfigDict(frozen=True)
