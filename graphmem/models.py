"""The public models: what the client accepts and returns (pydantic, validated, JSON-ready).

Input limits (each violation is an :class:`~graphmem.errors.InvalidInputError` and writes
nothing):

* a namespace matches :data:`NAMESPACE_PATTERN`: 1 to 128 characters from letters, digits
  and ``. _ - : @``, starting with a letter or digit;
* a fact's text and a recall query are 1 to :data:`MAX_TEXT_CHARS` characters and not only
  whitespace; an episode's content is at most :data:`MAX_EPISODE_CHARS`;
* every datetime carries a time zone (naive datetimes are ambiguous and refused); values are
  stored in UTC;
* ``valid_to`` must be after ``valid_from``;
* at most :data:`MAX_TAGS` tags of at most :data:`MAX_LABEL_CHARS` characters each; sources,
  roles, speakers, session and external ids are at most :data:`MAX_LABEL_CHARS` characters;
* ``metadata`` is a JSON object of at most :data:`MAX_METADATA_BYTES` bytes once encoded,
  nested at most :data:`MAX_METADATA_DEPTH` objects or arrays deep, with string keys at every
  level (lists and tuples are stored as JSON arrays);
* values are not converted between types: texts, labels and ids are ``str`` (valid Unicode,
  with at least one visible character, see :func:`is_blank`), flags are ``bool``, times are
  datetimes or ISO-8601 strings (a bare number is refused: seconds or milliseconds?).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    TypeAdapter,
    ValidationError,
    model_validator,
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


def _datetime_or_text(value: Any) -> Any:
    """Only a datetime or an ISO-8601 string is a time. A bare number, or a string of one
    ('20250101', '.5', '1e9'), is refused: pydantic would read it as Unix time, so '20250101'
    would become a day in 1970. A string may end in a bracketed zone id, as Neo4j writes
    times."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and not _is_number(value):
        return _zoned_time(value) or value
    raise ValueError(
        f"expected a datetime or an ISO-8601 string such as '2026-03-01T09:00:00+00:00', "
        f"got {brief(value)}"
    )


def _aware_utc(value: datetime) -> datetime:
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError(
            "naive datetime (no time zone): give one with a zone, e.g. "
            "datetime.now(timezone.utc) or '2026-03-01T09:00:00+00:00'"
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


def _text(limit: int, noun: str = "text") -> Any:
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
StoredDatetime = Annotated[datetime, BeforeValidator(native_time)]
Namespace = Annotated[str, AfterValidator(check_namespace)]
#: A string as given: no bytes or other types converted, valid Unicode.
Text = Annotated[str, Strict(), AfterValidator(_unicode_text)]
FactText = Annotated[Text, _text(MAX_TEXT_CHARS)]
EpisodeText = Annotated[Text, _text(MAX_EPISODE_CHARS)]
Label = Annotated[Text, _text(MAX_LABEL_CHARS, "value")]
Id = Label
Tags = Annotated[
    # Each tag is checked as recall's tags filter checks it: one it refuses could never match.
    tuple[Label, ...],
    BeforeValidator(one_or_many),
    AfterValidator(_tags),
]
Ids = Annotated[tuple[Id, ...], Field(max_length=MAX_IDS), BeforeValidator(one_or_many)]
Metadata = Annotated[dict[str, Any] | None, AfterValidator(_metadata)]


def _metadata_from_graph(value: Any) -> Any:
    if isinstance(value, str):
        return json.loads(value)
    return value


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class _Output(BaseModel):
    model_config = ConfigDict(frozen=True)


# --- inputs -------------------------------------------------------------------------------------
class FactInput(_Input):
    """One fact to remember (the batch form of :meth:`Memory.remember` takes a list of them)."""

    text: FactText
    source: Label | None = None
    tags: Tags = ()
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    supersedes: Ids = ()
    references: Ids = ()
    metadata: Metadata = None
    pinned: StrictBool = False
    reason: Annotated[Text, _text(MAX_TEXT_CHARS, "reason")] | None = None

    @model_validator(mode="after")
    def _check(self) -> FactInput:
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError(
                f"valid_to ({self.valid_to.isoformat()}) must be after valid_from "
                f"({self.valid_from.isoformat()})"
            )
        for name, ids in (("supersedes", self.supersedes), ("references", self.references)):
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name} lists the same id twice")
        if set(self.supersedes) & set(self.references):
            raise ValueError("a fact cannot both supersede and reference the same id")
        if self.reason is not None and not (self.supersedes or self.references):
            raise ValueError(
                "reason is kept on the SUPERSEDES and REFERENCES edges: give supersedes or "
                "references with it"
            )
        return self


class Message(_Input):
    """One verbatim message for :meth:`Memory.ingest`.

    ``content`` is stored as given. ``external_id`` is the caller's own id of the message;
    re-sending a message with the same namespace, session and external id (or the same content
    hash, unless both carry external ids, which then tell them apart) does not store it twice.
    """

    content: EpisodeText
    #: ``None`` (a JSON null) means the default, as an absent role does.
    role: Annotated[Label, BeforeValidator(lambda value: "user" if value is None else value)] = (
        "user"
    )
    speaker: Label | None = None
    occurred_at: AwareDatetime | None = None
    external_id: Id | None = None
    session_id: Id | None = None
    metadata: Metadata = None


# --- stored nodes -------------------------------------------------------------------------------
class Fact(_Output):
    """A :Fact node (without its embedding)."""

    id: str
    ns: str
    text: str
    status: FactStatus
    recorded_at: StoredDatetime
    retired_at: StoredDatetime | None = None
    valid_from: StoredDatetime | None = None
    valid_to: StoredDatetime | None = None
    stated_valid_to: StoredDatetime | None = None
    """On a superseded fact, the ``valid_to`` it carried while believed (None when open)."""
    superseded_by: str | None = None
    source: str | None = None
    tags: tuple[str, ...] = ()
    access_count: int = 0
    last_accessed_at: StoredDatetime | None = None
    text_hash: str
    metadata: Annotated[dict[str, Any] | None, BeforeValidator(_metadata_from_graph)] = None
    pinned: bool = False

    @property
    def believed(self) -> bool:
        """Whether graphmem believes it now (not retired)."""
        return self.retired_at is None

    def as_believed_at(self, moment: datetime) -> Fact:
        """This fact as graphmem believed it at transaction time ``moment``: a fact retired
        later is shown active, with the ``valid_to`` it then had and no replacement. (Usage
        counts and the pin are current values: they are not part of the belief history.)"""
        if self.retired_at is None or self.retired_at <= moment:
            return self
        return self.model_copy(
            update={
                "status": "active",
                "retired_at": None,
                "superseded_by": None,
                "valid_to": self.stated_valid_to,
                "stated_valid_to": None,
            }
        )


class Episode(_Output):
    """An :Episode node: one verbatim message (without its embedding)."""

    id: str
    ns: str
    content: str
    role: str
    speaker: str | None = None
    session_id: str | None = None
    external_id: str | None = None
    occurred_at: StoredDatetime | None = None
    recorded_at: StoredDatetime
    content_hash: str
    access_count: int = 0
    last_accessed_at: StoredDatetime | None = None
    metadata: Annotated[dict[str, Any] | None, BeforeValidator(_metadata_from_graph)] = None


# --- recall -------------------------------------------------------------------------------------
class Scores(_Output):
    """How a hit scored. ``vector`` is the cosine similarity (-1..1) to the query; ``fulltext``
    the Lucene score (absent when the text did not match); ranks are 1-based within each
    retriever's candidates; ``fused`` the fusion score, ``recency`` the multiplier applied to it,
    and ``lexical`` the share of the query's words found in the text (used by the quality
    gate)."""

    vector: float | None = None
    vector_rank: int | None = None
    fulltext: float | None = None
    fulltext_rank: int | None = None
    fused: float
    recency: float
    lexical: float
    final: float


class SourceMessage(_Output):
    """One episode (verbatim message) behind a hit."""

    episode_id: str
    #: The caller's own id of the message, if it was sent with one.
    external_id: str | None = None
    session_id: str | None = None
    occurred_at: StoredDatetime | None = None


class Provenance(_Output):
    """Where a hit came from: the episodes (verbatim messages) behind it, in the order they
    were sent (by ``occurred_at``, those without one last, then by the caller's id).
    ``messages`` has one entry per episode; the three tuples are its ids, the external ids
    that are set and the distinct sessions."""

    episode_ids: tuple[str, ...] = ()
    external_ids: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    messages: tuple[SourceMessage, ...] = ()


class Hit(_Output):
    kind: Kind
    id: str
    text: str
    score: float
    scores: Scores
    provenance: Provenance
    fact: Fact | None = None
    episode: Episode | None = None
    #: "search" for a direct match; "supersession" for the fact that replaced a superseded
    #: fact the search matched (``superseded_match``; the scores are that fact's); "reference"
    #: for a fact reached over REFERENCES from ``referenced_from``.
    via: Literal["search", "supersession", "reference"] = "search"
    referenced_from: str | None = None
    #: The superseded fact whose match led to this one (via "supersession", or a "reference"
    #: that pointed at it): this hit is what replaced it.
    superseded_match: str | None = None

    @property
    def time(self) -> datetime | None:
        """The hit's date: when the fact was recorded, or when the message was sent."""
        if self.fact is not None:
            return self.fact.valid_from or self.fact.recorded_at
        if self.episode is not None:
            return self.episode.occurred_at or self.episode.recorded_at
        return None


class Timing(_Output):
    """Milliseconds spent embedding the query, in database reads, and stamping access."""

    embed_ms: float = 0.0
    db_ms: float = 0.0
    stamp_ms: float = 0.0
    total_ms: float = 0.0


class RecallResult(_Output):
    """The hits of one recall, best first, with what the search did to find them."""

    query: str
    ns: str
    hits: tuple[Hit, ...]
    as_of: datetime | None = None
    valid_at: datetime | None = None
    #: Candidates seen before the quality gate, and how many it dropped.
    candidates: int = 0
    gated: int = 0
    #: True when the filters hid so much that the indexes were asked again for more.
    widened: bool = False
    #: True when even that was not enough and exact scoring ran instead.
    exact_fallback: bool = False
    timing: Timing = Timing()

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]

    def iter_hits(self) -> Iterator[Hit]:
        return iter(self.hits)

    @property
    def texts(self) -> list[str]:
        return [hit.text for hit in self.hits]


class ContextBlock(_Output):
    """A prompt-ready block of memory within a token budget."""

    text: str
    tokens: int
    budget_tokens: int
    tokenizer: str
    fact_ids: tuple[str, ...] = ()
    episode_ids: tuple[str, ...] = ()
    #: Lines that matched but did not fit in the budget, and pinned facts past pinned_limit.
    omitted: int = 0


# --- writes, reads and audit --------------------------------------------------------------------
class IngestResult(_Output):
    ns: str
    #: Episodes created by this call, in input order.
    episodes: tuple[Episode, ...] = ()
    #: For each input that repeated a message (one stored before, or an earlier input of the
    #: same call), in input order: the id of the stored episode it matched.
    duplicates: tuple[str, ...] = ()
    #: Facts an extractor derived from the new episodes (none without an extractor).
    facts: tuple[Fact, ...] = ()

    @property
    def created(self) -> int:
        return len(self.episodes)


class SupersedesEdge(_Output):
    """``(newer)-[:SUPERSEDES]->(older)`` with when, who and why."""

    newer_id: str
    older_id: str
    at: StoredDatetime
    actor: str
    reason: str | None = None


class FactHistory(_Output):
    """A fact's place in its ``SUPERSEDES`` chain, both ways, oldest first."""

    fact_id: str
    #: The believed fact the chain leads to now (None if the chain ends in a retired fact).
    head_id: str | None
    facts: tuple[Fact, ...]
    edges: tuple[SupersedesEdge, ...]


class NamespaceStats(_Output):
    ns: str
    facts: int
    facts_by_status: dict[str, int]
    #: Believed pinned facts: those context puts first (a retired fact keeps its pin for the
    #: past, but is not counted).
    pinned: int
    episodes: int
    sessions: int
    supersedes: int
    contradictions_open: int
    references: int
    derived_from: int
    first_recorded_at: StoredDatetime | None = None
    last_recorded_at: StoredDatetime | None = None
