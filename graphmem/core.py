"""The memory operations as I/O-free plans, shared by :class:`Memory` and :class:`AsyncMemory`.

Each operation is a generator (a *plan*) that yields what it needs done and receives the
answer: :class:`Embed` (texts to vectors), :class:`Extract` (facts from new episodes) and
:class:`Transaction` (a unit of work that yields :class:`Run` statements and receives their
rows). The sync and async clients only drive plans: validation, Cypher parameters, fusion, the
quality gate and the shape of every result live here, once.

A transaction's work is a factory, so the driver can run it again when Neo4j asks for a retry.
Errors raised inside the work roll the transaction back: nothing is half-written.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import numbers
import time
import uuid
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence, Sized
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import cache
from typing import Any, Generic, Literal, Protocol, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import numpy.typing as npt
from pydantic import BaseModel, TypeAdapter, ValidationError

from graphmem._text import and_more, printable
from graphmem.cypher import CypherQuery, query
from graphmem.embeddings import Vectors, check_vectors
from graphmem.errors import (
    ClientUsageError,
    DatabaseError,
    EmbeddingError,
    ExtractionError,
    ForgottenError,
    GraphmemError,
    InvalidInputError,
    MessageConflictError,
    NotFoundError,
    RetiredFactError,
    TransientDatabaseError,
)
from graphmem.fulltext import lucene_query
from graphmem.models import (
    MAX_IDS,
    MAX_K,
    MAX_LABEL_CHARS,
    AwareDatetime,
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    FactInput,
    FactText,
    Hit,
    Id,
    IngestResult,
    Kind,
    Message,
    NamespaceStats,
    Provenance,
    RecallResult,
    Scores,
    SupersedesEdge,
    Timing,
    check_namespace,
    describe_validation_error,
    native_time,
    one_or_many,
)
from graphmem.ranking import (
    MAX_INDEX_CANDIDATES,
    Candidate,
    RecallConfig,
    content_words,
    fuse,
    index_score_to_cosine,
    lexical_coverage,
    passes_gate,
    recency_factor,
)
from graphmem.schema import SCHEMA_KEY, check_embedder
from graphmem.tokens import TokenCounter

T = TypeVar("T")
Rows = list[dict[str, Any]]

#: Who a write is attributed to on its relationships when it comes through the client.
API_ACTOR = "api"


class VectorParam(list[float]):
    """A vector as a Cypher parameter: a plain list to the driver, with a short ``repr``.

    The Neo4j Python driver formats the ``repr`` of every parameter for its debug log even
    when debug logging is off; for thousands of 384-d vectors that costs more than sending
    them. This keeps the log line short and the write path fast.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)}-d vector>"


# --- the steps a plan yields ----------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """One statement inside a transaction; answered with its rows as dicts."""

    query: CypherQuery
    params: dict[str, Any]


Work = Generator[Run, Rows, T]


@dataclass(frozen=True)
class Transaction(Generic[T]):
    """A read or write transaction running ``work()``; answered with its return value."""

    mode: Literal["read", "write"]
    work: Callable[[], Work[T]]


@dataclass(frozen=True)
class Embed:
    """Texts to embed; answered with a float32 array, one unit row per text."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class LoadModel:
    """Load the embedding model now if it loads lazily (answered with None), so that an
    embedding timed next measures the embedding, not the loading."""


@dataclass(frozen=True)
class Progress:
    """``count`` more input items handled: the runner calls ``report(count)`` (answered with
    None); :class:`~graphmem.memory.AsyncMemory` also awaits what it returns if awaitable."""

    report: Callable[[int], object]
    count: int


@dataclass(frozen=True)
class Extract:
    """New episodes for the configured extractor; answered with a list of ExtractedFact."""

    episodes: tuple[Episode, ...]


Step = Run | LoadModel | Embed | Progress | Extract | Transaction[Any]
Plan = Generator[LoadModel | Embed | Progress | Extract | Transaction[Any], Any, T]


# --- the extractor interface ----------------------------------------------------------------------
class ExtractedFact(BaseModel):
    """An atomic fact an extractor found, with the episodes (by id) it came from."""

    text: str
    episode_ids: tuple[str, ...]
    tags: tuple[str, ...] = ()
    valid_from: AwareDatetime | None = None


class Extractor(Protocol):
    """Derives atomic facts from verbatim episodes (for example with an LLM).

    ``ingest`` calls it with the new episodes before it writes them (their ``recorded_at`` is
    the time of the call; the transaction that stores them sets the final one), then stores
    the episodes and the facts in one transaction; with ``batch_size``, once per batch. If it
    raises, or returns anything but a list of :class:`ExtractedFact` (or of mappings with its
    fields), the episodes it was shown are not written. :class:`~graphmem.memory.AsyncMemory`
    also awaits what it returns when that is awaitable (an ``async def extract``).
    """

    @property
    def name(self) -> str: ...

    def extract(self, episodes: Sequence[Episode]) -> Sequence[ExtractedFact]: ...


@contextmanager
def extractor_errors(extractor: Extractor | None) -> Iterator[None]:
    """An extractor's own errors as :class:`ExtractionError` (graphmem's pass through)."""
    try:
        yield
    except GraphmemError:
        raise
    except Exception as exc:
        name = getattr(extractor, "name", type(extractor).__name__)
        raise ExtractionError(
            f"the extractor {name!r} failed, so none of the messages it was given was written: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def reported(result: object) -> None:
    """Refuses what a progress callback returned when it is awaitable: only
    :class:`~graphmem.memory.AsyncMemory` awaits one. The sync client's first report comes
    before anything is written, so the refusal writes nothing."""
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited: close it rather than leave a warning behind
        raise ClientUsageError(
            "progress returned an awaitable; an async progress callback needs AsyncMemory"
        )


def extracted_facts(result: Any) -> list[ExtractedFact]:
    """What an extractor returned, checked: a list (or other iterable) of
    :class:`ExtractedFact`, or of mappings with its fields. Anything else raises ``TypeError``
    or ``ValueError``, which :func:`extractor_errors` reports as the extractor's failure."""
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited: close it rather than leave a warning behind
        raise TypeError("extract returned an awaitable; an async extractor needs AsyncMemory")
    if isinstance(result, str | bytes | Mapping | BaseModel) or not isinstance(result, Iterable):
        raise TypeError(f"extract returned {type(result).__name__}, not a list of ExtractedFact")
    facts = []
    for i, item in enumerate(result):
        if isinstance(item, Mapping):
            try:
                item = ExtractedFact.model_validate(item)
            except ValidationError as exc:
                raise ValueError(f"extracted fact {i}: {describe_validation_error(exc)}") from None
        if not isinstance(item, ExtractedFact):
            raise TypeError(f"extracted fact {i} is {type(item).__name__}, not an ExtractedFact")
        facts.append(item)
    return facts


# --- validation -----------------------------------------------------------------------------------
def validate(model: type[BaseModel], data: Mapping[str, Any], what: str) -> Any:
    """``model`` from ``data``, with pydantic's errors as one InvalidInputError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {what}: {describe_validation_error(exc)}") from exc


def resolve_config(given: Any, base: RecallConfig, name: str) -> RecallConfig:
    """``given`` as a recall config: ``None`` is ``base``, a mapping changes some of ``base``'s
    fields, and a :class:`RecallConfig` is checked again (one changed with ``model_copy`` or
    built with ``model_construct`` skipped pydantic's checks)."""
    if given is None:
        return base
    if isinstance(given, RecallConfig):
        checked: RecallConfig = validate(RecallConfig, dict(given), name)
        return checked
    if isinstance(given, Mapping):
        merged: RecallConfig = validate(RecallConfig, {**dict(base), **given}, name)
        return merged
    raise InvalidInputError(f"{name} must be a RecallConfig or a mapping, got {given!r}")


M = TypeVar("M", bound=BaseModel)


def _coerce(model: type[M], text_field: str, item: M | Mapping[str, Any] | str, what: str) -> M:
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
_QUERY_TEXT: TypeAdapter[str] = TypeAdapter(FactText)
_ID: TypeAdapter[str] = TypeAdapter(Id)


def _checked(adapter: TypeAdapter[T], name: str, value: Any) -> T:
    """``value`` validated by ``adapter``, with pydantic's errors as one InvalidInputError."""
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {name}: {describe_validation_error(exc)}") from exc


def aware(name: str, value: datetime | str | None) -> datetime | None:
    """A time-zone-aware UTC datetime from a datetime or an ISO-8601 string, or None."""
    return None if value is None else _checked(_AWARE, name, value)


def namespace(ns: str | None, default: str | None) -> str:
    chosen = ns if ns is not None else default
    if chosen is None:
        raise InvalidInputError("no namespace: pass ns=... or give the client a default ns")
    try:
        return check_namespace(chosen)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {value!r}")
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
        raise InvalidInputError(f"{name} must be an integer {bounds}, got {value!r}")
    return value


def _items(name: str, value: Any, what: str) -> list[Any]:
    """``value`` as a list: a list, tuple or other iterable (never one string), else an error."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInputError(f"{name} takes a list of {what}, got {value!r:.80}")
    return list(value)


def _ids(name: str, ids: Iterable[str]) -> list[str]:
    result = _items(name, one_or_many(ids), "strings")
    if len(result) > MAX_IDS:
        raise InvalidInputError(f"{name}: at most {MAX_IDS} ids, got {len(result)}")
    return [_checked(_ID, name, item) for item in result]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(message: Message, session_id: str | None, occurrence: int = 0) -> str:
    """What makes two messages the same message: session, role, speaker, time and content, and
    for the second and later of identical messages in one ``ingest`` call, which one it is
    (``occurrence`` 1, 2, ...): a transcript where "yes" answers two questions holds two
    messages, and sending it again matches each to its own."""
    return _message_hash(
        session_id, message.role, message.speaker, message.occurred_at, message.content, occurrence
    )


def _message_hash(
    session_id: str | None,
    role: str,
    speaker: str | None,
    occurred_at: datetime | None,
    content: str,
    occurrence: int = 0,
) -> str:
    key: list[Any] = [
        session_id,
        role,
        speaker,
        occurred_at.isoformat() if occurred_at else None,
        content,
    ]
    if occurrence:
        key.append(occurrence)
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()


def conflict_reason(external_id: str, session_id: str | None, other: str) -> str:
    """Why a message whose external id is already ``other``'s is refused."""
    return (
        f"external id {external_id!r} (session {session_id!r}) is already {other}'s, with a "
        "different content, role, speaker or time: an external id names one message, and "
        "stored messages are never changed; send an edit under an external id of its own"
    )


def _edit_conflict(
    row: Mapping[str, Any],
    own_hash: str,
    other_hash: str,
    *,
    other_index: int | None = None,
    episode_id: str | None = None,
) -> MessageConflictError | None:
    """The refusal of message ``row`` when the earlier input ``other_index`` or the stored
    episode ``episode_id``, which has its session and external id, differs (compared by their
    hashes without occurrence numbers); None when they are the same message."""
    if other_hash == own_hash:
        return None
    other = f"message {other_index}" if episode_id is None else f"episode {episode_id}"
    return MessageConflictError(
        f"message {row['i']}: " + conflict_reason(row["external_id"], row["session_id"], other),
        ids=() if episode_id is None else (episode_id,),
        index=row["i"],
        other_index=other_index,
        external_id=row["external_id"],
        session_id=row["session_id"],
    )


def _refuse_conflicts(conflicts: Sequence[MessageConflictError]) -> None:
    """Raise the first of ``conflicts`` (in input order), carrying them all, if there are any."""
    if not conflicts:
        return
    ordered = sorted(conflicts, key=lambda c: c.index if c.index is not None else -1)
    first = ordered[0]
    first.args = (f"{first}{and_more([str(c.index) for c in ordered[1:]], 'messages')}",)
    first.conflicts = tuple(ordered)
    raise first


def _metadata_json(metadata: Mapping[str, Any] | None) -> str | None:
    return None if metadata is None else json.dumps(metadata, sort_keys=True)


def _created_fact(
    row: Mapping[str, Any], recorded_at: Any, from_update: bool, pinned_by_update: bool
) -> Fact:
    """The :Fact that ``fact_create`` stored from ``row`` in a transaction at ``recorded_at``
    (``from_update``: it was given that time as its valid_from; ``pinned_by_update``: it
    replaced a pinned fact): every property is the row's or a constant of the statement, so
    nothing is read back."""
    return Fact.model_validate(
        {
            "id": row["id"],
            "ns": row["ns"],
            "text": row["text"],
            "status": "active",
            "recorded_at": recorded_at,
            "valid_from": recorded_at if from_update else row["valid_from"],
            "valid_to": row["valid_to"],
            "source": row["source"],
            "tags": row["tags"],
            "text_hash": row["text_hash"],
            "metadata": row["metadata"],
            "pinned": row["pinned"] or pinned_by_update,
        }
    )


def _fact_rows(
    ns: str,
    inputs: Sequence[FactInput],
    vectors: Vectors,
    derived_from: Sequence[Sequence[str]] | None,
) -> list[dict[str, Any]]:
    """The rows ``fact_create`` writes for ``inputs``, with new ids."""
    return [
        {
            "id": str(uuid.uuid4()),
            "ns": ns,
            "text": item.text,
            "text_hash": text_hash(item.text),
            "embedding": VectorParam(vector.tolist()),
            "source": item.source,
            "tags": list(item.tags),
            "valid_from": item.valid_from,
            "valid_to": item.valid_to,
            "metadata": _metadata_json(item.metadata),
            "pinned": item.pinned,
            "reason": item.reason,
            "supersedes": list(item.supersedes),
            "references": list(item.references),
            "derived_from": list(derived_from[i]) if derived_from else [],
        }
        for i, (item, vector) in enumerate(zip(inputs, vectors, strict=True))
    ]


def _fact_work(
    ns: str,
    inputs: Sequence[FactInput],
    rows: list[dict[str, Any]],
    actor: str,
    guard: Callable[[], Work[None]] | None = None,
) -> Callable[[], Work[list[Fact]]]:
    """The transaction work that writes ``rows`` (made from ``inputs``): it checks the
    graph's embedder (``guard``, unless the transaction did), locks and checks the facts they
    supersede or reference, then creates them. The locks make a concurrent supersession or
    erasure of a target wait for this transaction, or this one wait for it and then see it."""
    superseded = sorted({old for item in inputs for old in item.supersedes})
    targets = sorted({t for item in inputs for t in (*item.supersedes, *item.references)})

    def work() -> Work[list[Fact]]:
        if guard is not None:
            yield from guard()
        if targets:
            yield Run(query("fact_lock"), {"ns": ns, "ids": targets})
            found = yield Run(query("fact_targets"), {"ns": ns, "ids": targets})
            _check_targets(found, set(superseded), ns)
        (out,) = yield Run(query("fact_create"), {"facts": rows, "actor": actor})
        if (
            out["created"] != len(rows)
            or out["superseded"] != len(superseded)
            or out["referenced"] != sum(len(row["references"]) for row in rows)
        ):
            raise DatabaseError("a superseded or referenced fact changed during the write")
        recorded_at, from_update = out["recorded_at"], set(out["valid_from_update"])
        pinned = set(out["pinned_update"])
        return [
            _created_fact(row, recorded_at, row["id"] in from_update, row["id"] in pinned)
            for row in rows
        ]

    return work


# --- plan results that are not public models ------------------------------------------------------
@dataclass
class _RecallReads:
    candidates: list[Candidate]
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    episodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: A fact that replaced superseded facts the search found -> those facts, in the order
    #: found, and when the replacing fact was recorded (epoch ms).
    through: dict[str, list[str]] = field(default_factory=dict)
    head_at: dict[str, int] = field(default_factory=dict)
    widened: bool = False
    exact: bool = False
    seen: int = 0
    gated: int = 0

    def add_briefs(self, row: Mapping[str, Any]) -> None:
        """Text, time and similarity of candidates, until details replace them."""
        self.facts.update((b["id"], b) for b in row["fact_briefs"])
        self.episodes.update((b["id"], b) for b in row["episode_briefs"])


def _merged(hits: list[dict[str, Any]], followed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``hits`` and the superseded candidates an earlier read ``followed`` that they lack."""
    seen = {h["id"] for h in hits}
    return [*hits, *(h for h in followed if h["id"] not in seen)]


def _cosines(reads: _RecallReads) -> dict[tuple[str, str], float]:
    """Every candidate's cosine similarity to the query, keyed by kind and id; a fact that
    replaced superseded facts the search found takes the best of its own and theirs, as in the
    vector list."""
    cosines = {
        (kind, item_id): index_score_to_cosine(brief["similarity"])
        for kind, briefs in (("fact", reads.facts), ("episode", reads.episodes))
        for item_id, brief in briefs.items()
        if brief.get("similarity") is not None
    }
    for target, olds in reads.through.items():
        found = [cosines[("fact", i)] for i in (target, *olds) if ("fact", i) in cosines]
        if found:
            cosines[("fact", target)] = max(found)
    return cosines


def _exact_cosine(hit: Mapping[str, Any], briefs: Mapping[str, Mapping[str, Any]]) -> float:
    """A vector hit's exact cosine similarity to the query.

    The vector index only selects the candidates: its score may come from quantised vectors,
    so the list is ranked by the similarity the search computed on the stored embeddings (both
    on Neo4j's ``(1 + cos) / 2`` scale).
    """
    similarity = briefs.get(hit["id"], {}).get("similarity")
    return index_score_to_cosine(hit["score"] if similarity is None else similarity)


class MemoryCore:
    """Validation and plans for every memory operation; the clients drive the plans."""

    def __init__(
        self,
        *,
        dimension: int,
        default_ns: str | None = None,
        config: RecallConfig | None = None,
        has_extractor: bool = False,
        model_id: str | None = None,
    ) -> None:
        if default_ns is not None:
            namespace(default_ns, None)
        self.dimension = dimension
        #: The embedder's model: writes and recall check, in their transaction, that the graph
        #: still has it (another may have replaced it with ``graphmem reembed`` since connect).
        self.model_id = model_id
        self.default_ns = default_ns
        self.config = config or RecallConfig()
        self.has_extractor = has_extractor

    def _guard(self) -> Work[None]:
        """Refuse to go on in this transaction unless the graph's embedder is this client's and
        no re-embedding is under way: vectors of two models must never meet."""
        if self.model_id is not None:
            rows = yield Run(query("schema_state"), {"key": SCHEMA_KEY})
            self._check_state(rows[0] if rows else None)

    def _check_state(self, state: Mapping[str, Any] | None) -> None:
        if self.model_id is not None:
            check_embedder(state, (), self)  # type: ignore[arg-type]

    # --- write path ------------------------------------------------------------------------------
    def remember(self, text: str, *, ns: str | None, **fields: Any) -> Plan[Fact]:
        ns = namespace(ns, self.default_ns)
        item = validate(FactInput, {"text": text, **fields}, "fact")
        facts = yield from self._write_facts(ns, [item], vectors=None)
        return facts[0]

    def remember_many(
        self,
        items: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None,
        vectors: npt.ArrayLike | None = None,
    ) -> Plan[list[Fact]]:
        ns = namespace(ns, self.default_ns)
        facts = _items("remember_many", items, "facts")
        inputs = [_coerce(FactInput, "text", item, f"fact {i}") for i, item in enumerate(facts)]
        if not inputs:
            if vectors is not None and (not isinstance(vectors, Sized) or len(vectors)):
                raise InvalidInputError("no facts but vectors were given")
            return []
        checked = None
        if vectors is not None:
            checked = self._user_vectors(vectors, len(inputs))
        return (yield from self._write_facts(ns, inputs, vectors=checked))

    def _user_vectors(self, vectors: npt.ArrayLike, count: int) -> Vectors:
        try:
            checked = check_vectors(vectors, self.dimension)
        except (EmbeddingError, ValueError, TypeError) as exc:
            raise InvalidInputError(f"invalid vectors: {exc}") from exc
        if len(checked) != count:
            raise InvalidInputError(f"{count} facts but {len(checked)} vectors")
        return checked

    def _write_facts(
        self,
        ns: str,
        inputs: Sequence[FactInput],
        *,
        vectors: Vectors | None,
        derived_from: Sequence[Sequence[str]] | None = None,
        actor: str = API_ACTOR,
    ) -> Plan[list[Fact]]:
        superseded: dict[str, int] = {}
        for i, item in enumerate(inputs):
            for old in item.supersedes:
                if old in superseded:
                    raise InvalidInputError(
                        f"facts {superseded[old]} and {i} both supersede {old!r}; "
                        "a fact is superseded once"
                    )
                superseded[old] = i
        if vectors is None:
            vectors = yield Embed(tuple(item.text for item in inputs))
        rows = _fact_rows(ns, inputs, vectors, derived_from)
        work = _fact_work(ns, inputs, rows, actor, self._guard)
        facts: list[Fact] = yield Transaction("write", work)
        return facts

    def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None,
        session_id: str | None = None,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> Plan[IngestResult]:
        ns = namespace(ns, self.default_ns)
        messages = _items("ingest", messages, "messages")
        if session_id is not None:
            (session_id,) = _ids("session_id", [session_id])
        if batch_size is not None:
            batch_size = checked_integer("batch_size", batch_size, 1)
        if progress is not None and not callable(progress):
            raise InvalidInputError("progress must be a callable taking a number of messages")
        parsed = [_coerce(Message, "content", m, f"message {i}") for i, m in enumerate(messages)]
        rows: list[dict[str, Any]] = []
        occurrences: Counter[str] = Counter()
        bases: list[str] = []  # each message's hash without its occurrence number
        for i, message in enumerate(parsed):
            session = message.session_id if message.session_id is not None else session_id
            base = content_hash(message, session)
            occurrences[base] += 1
            bases.append(base)
            later = occurrences[base] - 1  # identical messages before this one in the call
            rows.append(
                {
                    "i": i,
                    "id": str(uuid.uuid4()),
                    "ns": ns,
                    "content": message.content,
                    "content_hash": content_hash(message, session, later) if later else base,
                    "role": message.role,
                    "speaker": message.speaker,
                    "session_id": session,
                    "external_id": message.external_id,
                    "occurred_at": message.occurred_at,
                    "metadata": _metadata_json(message.metadata),
                }
            )
        if not rows:
            return IngestResult(ns=ns)
        # Repeats inside this batch: the first occurrence stands for the others.
        fresh: list[dict[str, Any]] = []
        repeat_of: dict[int, int] = {}  # input index -> index of the first occurrence
        # A message repeats another with the same session and external id, or with the same
        # content hash unless both carry external ids (then those ids tell them apart).
        by_key: dict[tuple[Any, ...], int] = {}
        refused: list[MessageConflictError] = []
        for row in rows:
            digest, external = row["content_hash"], row["external_id"]
            if external is None:
                keys: list[tuple[Any, ...]] = [("hash", digest)]
                own: list[tuple[Any, ...]] = [("hash", digest), ("hash without id", digest)]
            else:
                keys = [("id", row["session_id"], external), ("hash without id", digest)]
                own = [("hash", digest), ("id", row["session_id"], external)]
            first = next((by_key[k] for k in keys if k in by_key), None)
            if first is not None:
                clash = None
                if external is not None and rows[first]["external_id"] == external:
                    clash = _edit_conflict(row, bases[row["i"]], bases[first], other_index=first)
                if clash is None:
                    repeat_of[row["i"]] = first
                else:  # refused below, with any other conflict, before anything is written
                    refused.append(clash)
                continue
            for k in own:
                by_key.setdefault(k, row["i"])
            fresh.append(row)

        def existing(
            candidates: list[dict[str, Any]], refused: Sequence[MessageConflictError] = ()
        ) -> Work[tuple[dict[int, str], set[int]]]:
            """The stored episode each candidate repeats, and which of those candidates carry
            an external id that their episode, stored without one, is to take. A candidate
            that conflicts with a stored message is refused, together with ``refused``."""
            probe = [
                {k: r[k] for k in ("i", "session_id", "external_id", "content_hash")}
                for r in candidates
            ]
            found = yield Run(query("episode_existing"), {"ns": ns, "rows": probe})
            conflicts = list(refused)
            for r in found:
                same = r["by_external_id"]  # the stored message with this external id
                if same is not None:
                    other = _message_hash(
                        same["session_id"],
                        same["role"],
                        same["speaker"],
                        native_time(same["occurred_at"]),
                        same["content"],
                    )
                    i = r["i"]
                    clash = _edit_conflict(rows[i], bases[i], other, episode_id=same["id"])
                    if clash is not None:
                        conflicts.append(clash)
            _refuse_conflicts(conflicts)
            matched = {r["i"]: r["existing"] for r in found if r["existing"] is not None}
            return matched, {r["i"] for r in found if r["adopt"]}

        def adopt(
            indexes: set[int], matched: Mapping[int, str], repeats: Sequence[Mapping[str, Any]]
        ) -> Work[None]:
            """Gives each episode stored without an external id the id of the message just
            found to repeat it (run under the namespace lock, after ``existing``). ``repeats``,
            the inputs the first read took for repeats that carry an id to give, must still
            match: another writer may have given their episode another id meanwhile, making
            them new messages, which this transaction has no vectors for."""
            lost = [r["i"] for r in repeats if r["i"] not in matched]
            if lost:
                raise TransientDatabaseError(
                    f"message {lost[0]}: another ingest gave the stored message it repeated "
                    "another external id meanwhile, so it is a new message; nothing of this "
                    "write was stored: send the same input again"
                )
            todo = [
                {"id": matched[i], "external_id": rows[i]["external_id"]}
                for i in sorted(indexes)
                if i in matched
            ]
            if todo:
                yield Run(query("episode_adopt"), {"ns": ns, "rows": todo})

        # Skip what is stored already before embedding, and refuse a conflict with a stored
        # message before anything is written; each write checks again under the lock.
        stored, adopting = yield Transaction("read", lambda: existing(fresh, refused))
        pending = [r for r in fresh if r["i"] in adopting]
        fresh = [r for r in fresh if r["i"] not in stored]
        if progress is not None:
            yield Progress(progress, len(rows) - len(fresh))  # repeats: nothing to write
        episodes: list[Episode] = []
        facts: list[Fact] = []
        size = batch_size or max(len(fresh), 1)
        for start in range(0, len(fresh), size):
            batch = fresh[start : start + size]
            # The first transaction also records the external ids of repeats.
            new, raced, derived = yield from self._ingest_batch(ns, batch, existing, adopt, pending)
            pending = []
            episodes += new
            facts += derived
            stored.update(raced)
            if progress is not None:
                yield Progress(progress, len(batch))
        if pending:

            def adopt_only() -> Work[dict[int, str]]:
                yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
                matched, still = yield from existing(pending)
                yield from adopt(still, matched, pending)
                return matched

            stored.update((yield Transaction("write", adopt_only)))
        # Each input that matched an episode, in input order: the id of the stored one.
        stored_id = {**{r["i"]: r["id"] for r in rows}, **stored}
        repeats = [
            stored_id[repeat_of.get(row["i"], row["i"])]
            for row in rows
            if row["i"] in repeat_of or row["i"] in stored
        ]
        return IngestResult(
            ns=ns, episodes=tuple(episodes), duplicates=tuple(repeats), facts=tuple(facts)
        )

    def _ingest_batch(
        self,
        ns: str,
        fresh: list[dict[str, Any]],
        existing: Callable[[list[dict[str, Any]]], Work[tuple[dict[int, str], set[int]]]],
        adopt: Callable[[set[int], Mapping[int, str], Sequence[Mapping[str, Any]]], Work[None]],
        repeats: list[dict[str, Any]],
    ) -> Plan[tuple[list[Episode], dict[int, str], list[Fact]]]:
        """Embeds the new messages, extracts their facts and stores both in one transaction,
        which also gives the episodes that ``repeats`` matched their external ids: the episodes
        created, the inputs found stored (by another writer meanwhile, or among ``repeats``),
        and the facts."""
        vectors = yield Embed(tuple(r["content"] for r in fresh))
        for row, vector in zip(fresh, vectors, strict=True):
            row["embedding"] = VectorParam(vector.tolist())

        # With an extractor, facts are extracted from the new messages before anything is
        # written, then stored with them in one transaction: a failing extractor writes nothing,
        # so the same messages can be sent again.
        fact_inputs: list[FactInput] = []
        fact_rows: list[dict[str, Any]] = []
        if self.has_extractor:
            fact_inputs, sources = yield from self._extract_facts(ns, fresh)
            if fact_inputs:
                fact_vectors = yield Embed(tuple(item.text for item in fact_inputs))
                fact_rows = _fact_rows(ns, fact_inputs, fact_vectors, sources)

        def write() -> Work[tuple[list[Episode], dict[int, str], list[Fact]]]:
            yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
            yield from self._guard()
            raced, adopting = yield from existing(fresh + repeats)
            yield from adopt(adopting, raced, repeats)
            todo = [{k: v for k, v in r.items() if k != "i"} for r in fresh if r["i"] not in raced]
            created = (yield Run(query("episode_create"), {"episodes": todo})) if todo else []
            new = [Episode.model_validate(r["episode"]) for r in created]
            # Facts from messages another writer stored meanwhile are that writer's to derive.
            ids = {e.id for e in new}
            keep = [i for i, row in enumerate(fact_rows) if set(row["derived_from"]) <= ids]
            facts: list[Fact] = []
            if keep:
                work = _fact_work(
                    ns, [fact_inputs[i] for i in keep], [fact_rows[i] for i in keep], "extractor"
                )
                facts = yield from work()
            return new, raced, facts

        written: tuple[list[Episode], dict[int, str], list[Fact]] = yield Transaction(
            "write", write
        )
        return written

    def _extract_facts(
        self, ns: str, fresh: Sequence[Mapping[str, Any]]
    ) -> Plan[tuple[list[FactInput], list[list[str]]]]:
        """The facts the extractor finds in the messages about to be stored, and for each the
        ids of the episodes it came from."""
        now = datetime.now(UTC)
        pending = tuple(
            Episode.model_validate(
                {
                    **{k: v for k, v in row.items() if k not in ("i", "embedding")},
                    "recorded_at": now,
                }
            )
            for row in fresh
        )
        extracted: Sequence[ExtractedFact] = yield Extract(pending)
        known = {e.id for e in pending}
        inputs, sources = [], []
        for i, item in enumerate(extracted):
            unknown = set(item.episode_ids) - known
            if unknown or not item.episode_ids:
                named = (
                    f"episodes that were not given: {sorted(unknown)}" if unknown else "no episode"
                )
                raise ExtractionError(
                    f"extracted fact {i} names {named}, so none of the messages was written"
                )
            fields = {"text": item.text, "tags": item.tags, "valid_from": item.valid_from}
            try:
                inputs.append(FactInput.model_validate(fields))
            except ValidationError as exc:  # the extractor's output, not the caller's input
                raise ExtractionError(
                    f"invalid extracted fact {i}: {describe_validation_error(exc)}, so none of "
                    "the messages was written"
                ) from exc
            sources.append(list(dict.fromkeys(item.episode_ids)))  # one edge per episode
        return inputs, sources

    # --- recall -----------------------------------------------------------------------------------
    def recall(
        self,
        text: str,
        *,
        ns: str | None,
        k: int = 10,
        kinds: Sequence[Kind] = ("fact", "episode"),
        as_of: datetime | str | None = None,
        valid_at: datetime | str | None = None,
        include_retired: bool = False,
        tags: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        expand_references: bool = True,
        min_score: float | None = None,
        config: RecallConfig | None = None,
        track_access: bool = True,
    ) -> Plan[RecallResult]:
        began = time.perf_counter()
        ns = namespace(ns, self.default_ns)
        text = _checked(_QUERY_TEXT, "recall query", text)
        k = checked_integer("k", k, 1, MAX_K)
        wanted = tuple(dict.fromkeys(_items("kinds", one_or_many(kinds), "kinds")))
        if not wanted or any(kind not in ("fact", "episode") for kind in wanted):
            raise InvalidInputError(f"kinds must name 'fact' and/or 'episode', got {kinds!r}")
        include_retired = _flag("include_retired", include_retired)
        expand_references = _flag("expand_references", expand_references)
        track_access = _flag("track_access", track_access)
        tag_list = None if tags is None else _ids("tags", tags)
        if tag_list == []:
            raise InvalidInputError("tags=[] would match no fact; pass tags=None for no tag filter")
        if tag_list is not None:
            if "fact" not in wanted:
                raise InvalidInputError(
                    "tags filter facts (episodes have none), but kinds asks for episodes only"
                )
            wanted = ("fact",)  # episodes have no tags
        filters = {
            "as_of": aware("as_of", as_of),
            "valid_at": aware("valid_at", valid_at),
            "since": aware("since", since),
            "until": aware("until", until),
        }
        if filters["since"] and filters["until"] and filters["until"] <= filters["since"]:
            raise InvalidInputError(
                f"until ({filters['until'].isoformat()}) must be after since "
                f"({filters['since'].isoformat()})"
            )
        cfg = resolve_config(config, self.config, "config")
        if cfg.widest(k) > MAX_INDEX_CANDIDATES:
            raise InvalidInputError(
                f"this recall config would ask an index for {cfg.widest(k):,} entries at k={k} "
                f"(candidates times the widest retry factor); at most {MAX_INDEX_CANDIDATES:,}"
            )
        if min_score is not None:
            if isinstance(min_score, bool) or not isinstance(min_score, numbers.Real):
                raise InvalidInputError(f"min_score must be a number, got {min_score!r}")
            if not -1.0 <= min_score <= 1.0:
                raise InvalidInputError(f"min_score must lie in [-1, 1], got {min_score!r}")
            cfg = cfg.model_copy(update={"min_score": float(min_score)})

        yield LoadModel()  # after every check, and untimed
        started = time.perf_counter()
        vector = VectorParam((yield Embed((text,)))[0].tolist())
        embed_ms = (time.perf_counter() - started) * 1000

        fact_filters = {**filters, "include_retired": include_retired, "tags": tag_list}
        now = filters["as_of"] or datetime.now(UTC)
        started = time.perf_counter()
        reads: _RecallReads = yield Transaction(
            "read",
            lambda: self._recall_reads(
                ns, text, vector, k, wanted, filters, fact_filters, expand_references, cfg, now
            ),
        )
        db_ms = (time.perf_counter() - started) * 1000
        hits = _assemble(reads, k, cfg, filters["as_of"])

        stamp_ms = 0.0
        if track_access and filters["as_of"] is None:  # as_of: an audit read
            stamp_ms = yield from _stamp_access(
                ns,
                [h.id for h in hits if h.kind == "fact"],
                [h.id for h in hits if h.kind == "episode"],
            )
        return RecallResult(
            query=text,
            ns=ns,
            hits=tuple(hits),
            as_of=filters["as_of"],
            valid_at=filters["valid_at"],
            candidates=reads.seen,
            gated=reads.gated,
            widened=reads.widened,
            exact_fallback=reads.exact,
            timing=Timing(
                embed_ms=embed_ms,
                db_ms=db_ms,
                stamp_ms=stamp_ms,
                total_ms=(time.perf_counter() - began) * 1000,
            ),
        )

    def _recall_reads(
        self,
        ns: str,
        text: str,
        vector: list[float],
        k: int,
        kinds: Sequence[Kind],
        filters: dict[str, Any],
        fact_filters: dict[str, Any],
        expand: bool,
        cfg: RecallConfig,
        now: datetime,
    ) -> Work[_RecallReads]:
        pool, candidates = cfg.pool(k), cfg.candidates(k)
        lucene = lucene_query(text)
        use_vector = "vector" in cfg.retrievers
        use_fulltext = "fulltext" in cfg.retrievers and lucene is not None
        search = {
            **fact_filters,
            "ns": ns,
            "vector": vector,
            "query": lucene,
            "pool": pool,
            "schema_key": SCHEMA_KEY,
        }
        found = yield Run(
            query("recall_search"),
            {
                **search,
                "candidates": candidates,
                "facts": "fact" in kinds,
                "episodes": "episode" in kinds,
                "use_vector": use_vector,
                "use_fulltext": use_fulltext,
            },
        )
        row = found[0]
        self._check_state(row["schema_state"])
        reads = _RecallReads(candidates=[])
        reads.add_briefs(row)
        lists: list[tuple[str, Literal["fact", "episode"], list[tuple[str, float]]]] = []
        kind: Kind
        for kind, prefix in (("fact", "f"), ("episode", "e")):
            if kind not in kinds:
                continue
            for retriever, enabled, widen in (
                ("vector", use_vector, cfg.vector_widen),
                ("fulltext", use_fulltext, cfg.fulltext_widen),
            ):
                if not enabled:
                    continue
                key = f"{prefix}{retriever[0]}"
                hits, fetched, asked = row[f"{key}_hits"], row[f"{key}_fetched"], candidates
                # Superseded facts standing for their successors, kept through the retries.
                followed = [h for h in hits if h.get("head")]
                for factor in widen:
                    if len(hits) >= k or fetched < asked:
                        break  # enough visible candidates, or the index has no more
                    # The filters hid most of what the index returned: ask for more.
                    asked = candidates * factor
                    wider = yield Run(
                        query("recall_search"),
                        {
                            **search,
                            "candidates": asked,
                            "facts": kind == "fact",
                            "episodes": kind == "episode",
                            "use_vector": retriever == "vector",
                            "use_fulltext": retriever == "fulltext",
                        },
                    )
                    hits, fetched = (
                        _merged(wider[0][f"{key}_hits"], followed),
                        wider[0][f"{key}_fetched"],
                    )
                    reads.add_briefs(wider[0])
                    reads.widened = True
                if retriever == "vector" and len(hits) < k and fetched >= asked:
                    # Still short: score every visible node of the namespace exactly (and,
                    # for facts, every superseded one, which stands for its successor).
                    params = {"ns": ns, **(fact_filters if kind == "fact" else filters)}
                    exact = yield Run(
                        query(f"recall_{kind}_exact"), {**params, "vector": vector, "pool": pool}
                    )
                    hits = _merged(exact, followed)
                    briefs = reads.facts if kind == "fact" else reads.episodes
                    briefs.update((h["id"], h["brief"]) for h in exact)
                    reads.exact = True
                briefs = reads.facts if kind == "fact" else reads.episodes
                # A superseded fact's match ranks the fact that replaced it, in the same list
                # as that fact's own match (the better of the two counts), so that fusion adds
                # its ranks from both retrievers, whichever fact each one found.
                best: dict[str, float] = {}
                for h in hits:
                    score = _exact_cosine(h, briefs) if retriever == "vector" else h["score"]
                    target = h.get("head") or h["id"]
                    if target != h["id"]:
                        via = reads.through.setdefault(target, [])
                        if h["id"] not in via:
                            via.append(h["id"])
                        reads.head_at[target] = h["head_at"]
                    best[target] = max(score, best.get(target, score))
                lists.append((retriever, kind, sorted(best.items(), key=lambda x: -x[1])))
        linear = use_vector and cfg.fusion == "linear"
        fused = fuse(lists, cfg, _cosines(reads) if linear else None)
        reads.seen = len(fused)
        reads.candidates, reads.gated = _gate(text, fused, reads, k, now, cfg)
        if reads.candidates:
            (details,) = yield Run(
                query("recall_details"),
                {
                    **fact_filters,
                    "ns": ns,
                    "fact_ids": [c.id for c in reads.candidates if c.kind == "fact"],
                    "episode_ids": [c.id for c in reads.candidates if c.kind == "episode"],
                    "vector": vector,
                    "expand": expand,
                },
            )
            reads.facts = {r["fact"]["id"]: r for r in details["facts"]}
            reads.episodes = {r["episode"]["id"]: r for r in details["episodes"]}
        return reads

    # --- context --------------------------------------------------------------------------------
    def context(
        self,
        text: str,
        *,
        ns: str | None,
        budget_tokens: int,
        counter: TokenCounter,
        k: int = 20,
        pinned_limit: int = 50,
        timezone: str | tzinfo | None = None,
        **recall_options: Any,
    ) -> Plan[ContextBlock]:
        ns = namespace(ns, self.default_ns)
        budget_tokens = checked_integer("budget_tokens", budget_tokens, 1)
        pinned_limit = checked_integer("pinned_limit", pinned_limit, 0, MAX_IDS)
        zone = time_zone(timezone)
        unknown = sorted(set(recall_options) - _RECALL_OPTIONS)
        if unknown:
            raise InvalidInputError(
                f"context got unknown options {unknown}; it takes budget_tokens, k and "
                "pinned_limit, and recall's: " + ", ".join(sorted(_RECALL_OPTIONS))
            )
        # Only the lines the block shows count as accessed, so recall stamps nothing itself.
        track_access = _flag("track_access", recall_options.pop("track_access", True))
        result: RecallResult = yield from self.recall(
            text, ns=ns, k=k, track_access=False, **recall_options
        )
        filters = {
            "as_of": result.as_of,
            "valid_at": result.valid_at,
            "include_retired": False,
            "tags": None,
            "since": None,
            "until": None,
        }
        pinned_rows: Rows = yield Transaction(
            "read",
            lambda: _single(
                Run(query("pinned_facts"), {"ns": ns, "limit": pinned_limit, **filters})
            ),
        )
        (row,) = pinned_rows
        pinned = [Fact.model_validate(fact) for fact in row["facts"]]
        if result.as_of is not None:
            pinned = [fact.as_believed_at(result.as_of) for fact in pinned]
        # Valid times are judged at the time asked about: valid_at, else as_of, else now.
        at = result.valid_at or result.as_of
        block = build_context(pinned, result.hits, budget_tokens, counter, at, zone)
        # Pinned facts past pinned_limit are left out too, unless recall found them.
        unseen = set(row["beyond"]) - {h.id for h in result.hits}
        if unseen:
            block = block.model_copy(update={"omitted": block.omitted + len(unseen)})
        if track_access and result.as_of is None:
            yield from _stamp_access(ns, list(block.fact_ids), list(block.episode_ids))
        return block

    # --- reads ------------------------------------------------------------------------------------
    def get(self, item_id: str, *, ns: str | None) -> Plan[Fact | Episode]:
        ns = namespace(ns, self.default_ns)
        (item_id,) = _ids("id", [item_id])

        def work() -> Work[Fact | Episode | None]:
            rows = yield Run(query("fact_get"), {"ns": ns, "ids": [item_id]})
            if rows:
                return Fact.model_validate(rows[0]["fact"])
            rows = yield Run(query("episode_get"), {"ns": ns, "ids": [item_id]})
            if rows:
                return Episode.model_validate(rows[0]["episode"])
            yield from _refuse_forgotten(ns, item_id)
            return None

        item: Fact | Episode | None = yield Transaction("read", work)
        if item is None:
            raise NotFoundError(
                f"no fact or episode {item_id!r} in namespace {ns!r}", ids=(item_id,)
            )
        return item

    def history(self, fact_id: str, *, ns: str | None) -> Plan[FactHistory]:
        ns = namespace(ns, self.default_ns)
        (fact_id,) = _ids("id", [fact_id])

        def work() -> Work[Rows]:
            rows = yield Run(query("fact_lineage"), {"ns": ns, "id": fact_id})
            if not rows or not rows[0]["facts"]:
                yield from _refuse_forgotten(ns, fact_id)
                yield from _refuse_episode(
                    ns,
                    fact_id,
                    "history follows the SUPERSEDES chain between facts (get shows the episode)",
                )
            return rows

        rows: Rows = yield Transaction("read", work)
        if not rows or not rows[0]["facts"]:
            raise NotFoundError(f"no fact {fact_id!r} in namespace {ns!r}", ids=(fact_id,))
        facts = sorted(
            (Fact.model_validate(f) for f in rows[0]["facts"]),
            key=lambda f: (f.recorded_at, f.id),
        )
        edges = sorted(
            (SupersedesEdge.model_validate(e) for e in rows[0]["edges"] if e is not None),
            key=lambda e: (e.at, e.newer_id, e.older_id),
        )
        by_id = {f.id: f for f in facts}
        head: Fact | None = by_id[fact_id]
        seen = set()
        while head is not None and head.superseded_by is not None and head.id not in seen:
            seen.add(head.id)
            head = by_id.get(head.superseded_by)
        return FactHistory(
            fact_id=fact_id,
            head_id=head.id if head is not None and head.believed else None,
            facts=tuple(facts),
            edges=tuple(edges),
        )

    def stats(self, *, ns: str | None) -> Plan[NamespaceStats]:
        ns = namespace(ns, self.default_ns)
        rows: Rows = yield Transaction("read", lambda: _single(Run(query("ns_stats"), {"ns": ns})))
        row = rows[0]
        by_status = {s["status"]: s["n"] for s in row["statuses"]}
        return NamespaceStats(
            ns=ns,
            facts=sum(by_status.values()),
            facts_by_status=by_status,
            **{k: row[k] for k in row if k != "statuses"},
        )

    def pin(self, fact_id: str, *, ns: str | None, pinned: bool = True) -> Plan[Fact]:
        ns = namespace(ns, self.default_ns)
        (fact_id,) = _ids("id", [fact_id])
        pinned = _flag("pinned", pinned)

        def work() -> Work[Rows]:
            # Locked first, as a supersession locks it: the check below cannot go stale.
            yield Run(query("fact_lock"), {"ns": ns, "ids": [fact_id]})
            (target,) = yield Run(query("fact_targets"), {"ns": ns, "ids": [fact_id]})
            if target["status"] is None and not target["forgotten"]:
                yield from _refuse_episode(ns, fact_id, "only facts are pinned")
            _check_targets([target], {fact_id} if pinned else set(), ns, ("pin", "pinned"))
            return (yield Run(query("fact_pin"), {"ns": ns, "id": fact_id, "pinned": pinned}))

        rows: Rows = yield Transaction("write", work)
        return Fact.model_validate(rows[0]["fact"])


# --- helpers --------------------------------------------------------------------------------------
def _single(run: Run) -> Work[Rows]:
    return (yield run)


def _refuse_episode(ns: str, item_id: str, why: str) -> Work[None]:
    """Raise NotFoundError, saying ``why``, if ``item_id`` is an episode of ``ns``: for calls
    that take a fact's id."""
    if (yield Run(query("episode_get"), {"ns": ns, "ids": [item_id]})):
        raise NotFoundError(f"{item_id!r} is an episode, not a fact: {why}", ids=(item_id,))


def _refuse_forgotten(ns: str, item_id: str) -> Work[None]:
    """Raise ForgottenError if ``item_id`` was a fact of ``ns`` that was forgotten."""
    found = yield Run(query("fact_targets"), {"ns": ns, "ids": [item_id]})
    if found and found[0]["forgotten"]:
        raise ForgottenError(f"{item_id!r} was forgotten", ids=(item_id,))


def _check_targets(
    found: Rows, believed: set[str], ns: str, verb: tuple[str, str] = ("supersede", "superseded")
) -> None:
    """Refuse unknown or forgotten ids among ``found`` (``fact_targets`` rows), and retired ones
    among ``believed``, the ids that ``verb`` (and its past participle) needs believed."""
    missing = tuple(r["id"] for r in found if r["status"] is None and not r["forgotten"])
    if missing:
        raise NotFoundError(
            f"no fact with id {', '.join(map(repr, missing))} in namespace {ns!r}", ids=missing
        )
    forgotten = tuple(r["id"] for r in found if r["forgotten"])
    if forgotten:
        raise ForgottenError(
            f"fact {', '.join(map(repr, forgotten))} was forgotten; only its tombstone remains",
            ids=forgotten,
        )
    retired = tuple(r["id"] for r in found if r["id"] in believed and r["retired_at"] is not None)
    if retired:
        statuses = {r["id"]: r["status"] for r in found}
        described = ", ".join(f"{i!r} ({statuses[i]})" for i in retired)
        raise RetiredFactError(
            f"cannot {verb[0]} {described}: only believed facts can be {verb[1]}; "
            f"{verb[0]} the fact that replaced it instead",
            ids=retired,
        )


def _gate(
    text: str,
    fused: Sequence[Candidate],
    reads: _RecallReads,
    k: int,
    now: datetime,
    cfg: RecallConfig,
) -> tuple[list[Candidate], int]:
    """The best ``k`` candidates that pass the quality gate, with their final scores."""
    words = content_words(text)
    kept: list[Candidate] = []
    gated = 0
    for cand in fused:
        briefs = reads.facts if cand.kind == "fact" else reads.episodes
        own = briefs.get(cand.id)
        olds = reads.through.get(cand.id, []) if cand.kind == "fact" else []
        tries = [(own, None), *((briefs.get(old_id), old_id) for old_id in olds)]
        if all(brief is None for brief, _ in tries):  # vanished between the index and the read
            continue
        # The fact itself passes the gate, or else one of the superseded facts the search
        # found, which then stands for it (its scores shown, via "supersession").
        passed = None
        for brief, matched in tries:
            if brief is None:
                continue
            similarity = brief["similarity"]
            vector = cand.vector if similarity is None else index_score_to_cosine(similarity)
            lexical = lexical_coverage(words, brief["text"])
            if passes_gate(vector, lexical, cfg):
                passed = (matched, vector, lexical)
                break
        if passed is None:
            gated += 1
            continue
        cand.matched, cand.vector, cand.lexical = passed
        at = own["at"] if own is not None else reads.head_at.get(cand.id)
        when = datetime.fromtimestamp(at / 1000, UTC) if at else None
        cand.recency = recency_factor(when, now, cfg)
        kept.append(cand)
    kept.sort(key=lambda c: (-c.fused * c.recency, c.kind, c.id))
    return kept[:k], gated


def _assemble(reads: _RecallReads, k: int, cfg: RecallConfig, as_of: datetime | None) -> list[Hit]:
    """Hits for the gated candidates, plus one hop of REFERENCES, best first; with ``as_of``,
    each fact as it was believed then."""

    def fact_of(data: Mapping[str, Any]) -> Fact:
        fact = Fact.model_validate(data)
        return fact if as_of is None else fact.as_believed_at(as_of)

    hits: dict[tuple[str, str], Hit] = {}
    for cand in reads.candidates:
        detail = (reads.facts if cand.kind == "fact" else reads.episodes).get(cand.id)
        if detail is None:
            continue
        fact = fact_of(detail["fact"]) if cand.kind == "fact" else None
        episode = Episode.model_validate(detail["episode"]) if cand.kind == "episode" else None
        final = cand.fused * cand.recency
        hits[(cand.kind, cand.id)] = Hit(
            kind=cand.kind,
            id=cand.id,
            text=fact.text if fact else episode.content,  # type: ignore[union-attr]
            score=final,
            scores=Scores(
                vector=cand.vector,
                vector_rank=cand.vector_rank,
                fulltext=cand.fulltext,
                fulltext_rank=cand.fulltext_rank,
                fused=cand.fused,
                recency=cand.recency,
                lexical=cand.lexical,
                final=final,
            ),
            provenance=_provenance(detail.get("provenance"), episode),
            fact=fact,
            episode=episode,
            via="search" if cand.matched is None else "supersession",
            superseded_match=cand.matched,
        )
    # One hop over REFERENCES from the facts that passed, at a discount.
    for (kind, item_id), hit in list(hits.items()):
        if kind != "fact":
            continue
        for ref in reads.facts[item_id]["references"]:
            fact = fact_of(ref["fact"])
            key = ("fact", fact.id)
            score = hit.score * cfg.reference_discount
            if key in hits and (hits[key].via != "reference" or hits[key].score >= score):
                continue  # found by the search, or through a better-scoring hit
            cosine = (
                index_score_to_cosine(ref["similarity"]) if ref["similarity"] is not None else None
            )
            hits[key] = Hit(
                kind="fact",
                id=fact.id,
                text=fact.text,
                score=score,
                scores=Scores(
                    vector=cosine,
                    fused=0.0,
                    recency=1.0,
                    lexical=0.0,
                    final=score,
                ),
                provenance=_provenance(ref["provenance"], None),
                fact=fact,
                via="reference",
                referenced_from=item_id,
                superseded_match=ref["superseded_match"],
            )
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.via == "reference", h.id))
    return ranked[:k]


def _provenance(rows: Sequence[Mapping[str, Any]] | None, episode: Episode | None) -> Provenance:
    if episode is not None:
        return Provenance(
            episode_ids=(episode.id,),
            external_ids=(episode.external_id,) if episode.external_id else (),
            session_ids=(episode.session_id,) if episode.session_id else (),
        )
    rows = rows or ()
    return Provenance(
        episode_ids=tuple(r["id"] for r in rows),
        external_ids=tuple(r["external_id"] for r in rows if r["external_id"]),
        session_ids=tuple(dict.fromkeys(r["session_id"] for r in rows if r["session_id"])),
    )


def _stamp_access(ns: str, fact_ids: list[str], episode_ids: list[str]) -> Plan[float]:
    """Adds 1 to the access count of each fact and episode, in one write; its time in ms."""
    if not fact_ids and not episode_ids:
        return 0.0
    started = time.perf_counter()
    params = {"ns": ns, "fact_ids": fact_ids, "episode_ids": episode_ids}
    yield Transaction("write", lambda: _single(Run(query("access_stamp"), params)))
    return (time.perf_counter() - started) * 1000


# --- context formatting ---------------------------------------------------------------------------
def context_header(zone: tzinfo = UTC) -> str:
    """The first line of a context block, naming the time zone of its dates."""
    return (
        f"Memory (newest belief per line; date or dates it holds, in {_zone_name(zone)}, then "
        "the memory, then its id):"
    )


def _zone_name(zone: tzinfo) -> str:
    return "UTC" if zone is UTC else getattr(zone, "key", None) or str(zone)


CONTEXT_HEADER = context_header()
_LINE_CHARS = 600


def time_zone(value: str | tzinfo | None) -> tzinfo:
    """The zone context dates are shown in: an IANA name such as ``Europe/Lisbon``, a
    :class:`~datetime.tzinfo`, or None for UTC."""
    if value is None:
        return UTC
    if isinstance(value, tzinfo):
        if value.utcoffset(datetime(2000, 1, 1)) is None:
            raise InvalidInputError(f"timezone {value!r} gives no UTC offset")
        if isinstance(value, ZoneInfo) and value.key not in _zone_names():
            # A copy of a file that names no zone, or a file read with ZoneInfo.from_file
            # (no key): the header would have no name a reader knows.
            raise InvalidInputError(
                f"timezone {value!r} names no zone: give an IANA zone name such as 'Europe/Lisbon'"
            )
        return value
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(
            f"timezone must be an IANA zone name such as 'Europe/Lisbon' or a tzinfo, got "
            f"{value!r:.80}"
        )
    if value.upper() == "UTC":
        return UTC
    if value in _NO_ZONE or value.startswith(("posix/", "right/")):
        raise InvalidInputError(
            f"timezone {value!r} names no zone: give an IANA zone name such as 'Europe/Lisbon'"
        )
    unknown = f"unknown timezone {value!r:.80}: give an IANA zone name such as 'Europe/Lisbon'"
    if value not in _zone_names():
        raise InvalidInputError(unknown)
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise InvalidInputError(unknown) from exc


#: Files of the zone database that name no zone a reader would know (a copy of the machine's
#: zone, a placeholder, a copy of America/New_York); posix/ and right/ hold copies.
_NO_ZONE = frozenset({"localtime", "Factory", "posixrules"})


@cache
def _zone_names() -> frozenset[str]:
    """The IANA zone names this machine knows (its zone database and the tzdata package)."""
    return frozenset(available_timezones()) - _NO_ZONE


def _day(moment: datetime, zone: tzinfo) -> str:
    return moment.astimezone(zone).date().isoformat()


def _clip(text: str, limit: int = _LINE_CHARS) -> str:
    """``text`` on one line (every run of whitespace, newlines included, one space), with its
    other control characters as escapes, and at most ``limit`` characters, so that no stored
    value can start a line of its own or drive the terminal that shows the block."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _fact_when(fact: Fact, at: datetime, zone: tzinfo) -> str:
    """A fact's date in ``zone`` (when it became true, else when it was recorded), with its
    end when it has one, and whether at ``at`` it is not yet or no longer true."""
    when = _day(fact.valid_from or fact.recorded_at, zone)
    if fact.valid_to is not None:
        end = _day(fact.valid_to, zone)
        when = f"until {end}" if fact.valid_from is None else f"{when} to {end}"
        if fact.valid_to <= at:
            return f"{when}, no longer true"
    if fact.valid_from is not None and fact.valid_from > at:
        return f"{when}, not yet true" if fact.valid_to else f"from {when}, not yet true"
    return when


def _fact_line(fact: Fact, pinned: bool, at: datetime, zone: tzinfo) -> str:
    if fact.status != "active":  # shown with include_retired: no longer believed, and no pin
        by = f", replaced by {fact.superseded_by}" if fact.superseded_by else ""
        label = f"{fact.status} fact {fact.id}{by}"
    else:
        label = f"{'pinned ' if pinned else ''}fact {fact.id}"
    return f"- [{_fact_when(fact, at, zone)}] {_clip(fact.text)} ({label})"


def _episode_line(episode: Episode, zone: tzinfo) -> str:
    when = _day(episode.occurred_at or episode.recorded_at, zone)
    who = _clip(episode.speaker or episode.role, MAX_LABEL_CHARS)
    ext = f", message {_clip(episode.external_id, MAX_LABEL_CHARS)}" if episode.external_id else ""
    return f"- [{when}] {who}: {_clip(episode.content)} (episode {episode.id}{ext})"


def build_context(
    pinned: Sequence[Fact],
    hits: Sequence[Hit],
    budget: int,
    counter: TokenCounter,
    at: datetime | None = None,
    zone: tzinfo = UTC,
) -> ContextBlock:
    """Pinned facts first, then the recall hits, one line each dated in ``zone``, never over
    ``budget``.

    A fact whose valid time has ended by ``at`` (default: now) is marked no longer true, one
    whose valid time starts after it not yet true. Lines are taken in order while the header,
    the lines taken and their newlines, each counted once by ``counter``, stay within the
    budget; a line that does not fit is left out (and counted in ``omitted``) and shorter later
    lines may still fit. The block is then counted whole, and where that is more than the sum
    (a tokenizer whose tokens span lines), lines come off its end until it fits.
    """
    at = at or datetime.now(UTC)
    header_line = context_header(zone)
    entries: list[tuple[str, str, str]] = [
        ("fact", f.id, _fact_line(f, True, at, zone)) for f in pinned
    ]
    shown = {f.id for f in pinned}
    for hit in hits:
        if hit.id in shown:
            continue
        shown.add(hit.id)
        if hit.fact is not None:
            entries.append(("fact", hit.id, _fact_line(hit.fact, hit.fact.pinned, at, zone)))
        elif hit.episode is not None:
            entries.append(("episode", hit.id, _episode_line(hit.episode, zone)))
    # Each line is counted once (for the default counter the sum is exact: WordPiece splits at
    # the newlines), so the work is linear in the block unless lines must come off its end.
    header = counter.count(header_line)
    newline = max(0, counter.count(f"{header_line}\n{header_line}") - 2 * header)
    kept: list[tuple[str, str, str]] = []
    omitted = 0
    total = header
    for entry in entries:
        cost = counter.count(entry[2]) + newline
        if total + cost <= budget:
            kept.append(entry)
            total += cost
        else:
            omitted += 1
    while True:
        text = "\n".join([header_line, *(line for _, _, line in kept)]) if kept else ""
        tokens = counter.count(text)
        if tokens <= budget or not kept:
            break
        kept.pop()
        omitted += 1
    return ContextBlock(
        text=text,
        tokens=tokens,
        budget_tokens=budget,
        tokenizer=counter.name,
        fact_ids=tuple(i for kind, i, _ in kept if kind == "fact"),
        episode_ids=tuple(i for kind, i, _ in kept if kind == "episode"),
        omitted=omitted,
    )


# What context passes on to recall (text, ns and k are context's own arguments).
_RECALL_OPTIONS = frozenset(inspect.signature(MemoryCore.recall).parameters) - {
    "self",
    "text",
    "ns",
    "k",
}
