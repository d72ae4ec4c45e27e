"""The indexes and constraints graphmem creates: their DDL, grouped into the schema's
migrations, the shape each must have, and the check of what a database holds against those
shapes. :mod:`graphmem.store.schema` applies and checks them.

Migrations are immutable once released: a change to the schema is a new migration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphmem.embed.identity import legacy_mismatch_hint, precision_mismatch_hint
from graphmem.errors import EmbedderMismatchError, SchemaError

VECTOR_INDEXES = {"fact_embedding": "Fact", "episode_embedding": "Episode"}
#: The properties each vector index carries for filtering inside the index, on servers whose
#: Cypher has the ``SEARCH`` clause (Neo4j 2026.01+): recall, consolidation and verification
#: then search one namespace (and, for facts, some statuses) instead of the whole index.
VECTOR_FILTERS: dict[str, tuple[str, ...]] = {
    "fact_embedding": ("ns", "status"),
    "episode_embedding": ("ns",),
}


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]
    #: Names of the indexes and constraints the statements create.
    creates: tuple[str, ...]
    #: Whether the statements need a server with in-index vector filtering (``SEARCH``); a
    #: statement may hold several, separated by ``;``.
    needs_search: bool = False

    @property
    def creating(self) -> tuple[str, ...]:
        """The statements without the drops of indexes they build again: each creates its
        index if missing."""
        return tuple(
            ";".join(part for part in statement.split(";") if not part.startswith("DROP "))
            for statement in self.statements
        )

    @property
    def checksum(self) -> str:
        return hashlib.sha256("\n;\n".join(self.statements).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class IndexShape:
    """What an index graphmem creates must be: its kind, what it covers, whether a uniqueness
    constraint owns it, and the settings its searches depend on."""

    type: str
    label: str
    properties: tuple[str, ...]
    unique: bool = False
    #: ``indexConfig`` entries (string values compared without regard to case).
    config: Mapping[str, str | bool] = field(default_factory=dict)
    #: Properties a vector index may also carry as filters (on servers that have them).
    filters: tuple[str, ...] = ()
    #: The properties earlier migrations built the index on, each with the migration that
    #: builds it again as it is now: a graph that has not recorded that one may still hold it.
    earlier: Mapping[tuple[str, ...], int] = field(default_factory=dict)

    def covers(self, properties: tuple[str, ...]) -> bool:
        """Whether an index on ``properties`` covers what this shape does: its own
        properties, or those and its filter properties."""
        return properties in {self.properties, self.properties + self.filters}

    def replaced_by(self, properties: tuple[str, ...]) -> int | None:
        """The migration that builds again an index an earlier one built on ``properties``
        (None when no earlier migration built it so)."""
        return None if self.covers(properties) else self.earlier.get(properties)


#: Each index graphmem creates, by name. Another application (or a person) may have created an
#: index of the same name first (``CREATE ... IF NOT EXISTS`` then keeps it), so what exists
#: is checked against these, not assumed.
INDEX_SHAPES: dict[str, IndexShape] = {}


def _unique(name: str, label: str, prop: str) -> str:
    INDEX_SHAPES[name] = IndexShape("RANGE", label, (prop,), unique=True)
    return f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"


def _range(name: str, label: str, *props: str) -> str:
    INDEX_SHAPES[name] = IndexShape("RANGE", label, props)
    columns = ", ".join(f"n.{p}" for p in props)
    return f"CREATE RANGE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({columns})"


def _fulltext(
    name: str, label: str, *props: str, with_ns: bool = False, rebuilt_in: int | None = None
) -> str:
    # english: lower-casing, stop words and Porter stemming ("works" finds "work").
    # eventually_consistent false: a fact is searchable as soon as its transaction commits.
    # with_ns (migration 10): the namespace too, so that a query can require it.
    # rebuilt_in: the migration of this statement, which builds again on other properties an
    # index that earlier ones built: until a graph records it, it may hold those.
    config: dict[str, str | bool] = {
        "fulltext.analyzer": "english",
        "fulltext.eventually_consistent": False,
    }
    earlier: dict[tuple[str, ...], int] = {}
    if rebuilt_in is not None and (before := INDEX_SHAPES.get(name)) is not None:
        built = (before.properties, before.properties + before.filters)
        earlier = {**before.earlier, **dict.fromkeys(built, rebuilt_in)}
    INDEX_SHAPES[name] = IndexShape(
        "FULLTEXT", label, props, config=config, filters=("ns",), earlier=earlier
    )
    columns = ", ".join(f"n.{p}" for p in (*props, *(("ns",) if with_ns else ())))
    return (
        f"CREATE FULLTEXT INDEX {name} IF NOT EXISTS FOR (n:{label}) ON EACH [{columns}] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', "
        "`fulltext.eventually_consistent`: false}}"
    )


def _vector(name: str, label: str, *, filtered: bool = False) -> str:
    config = {"vector.similarity_function": "cosine"}
    filters = VECTOR_FILTERS[name]
    INDEX_SHAPES[name] = IndexShape("VECTOR", label, ("embedding",), config=config, filters=filters)
    # Filter properties are Cypher 25 syntax (Neo4j 2026.01+).
    prefix, with_filters = "", ""
    if filtered:
        prefix = "CYPHER 25 "
        with_filters = "WITH [" + ", ".join(f"n.{p}" for p in filters) + "] "
    return (
        f"{prefix}CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.embedding) "
        f"{with_filters}OPTIONS {{indexConfig: {{`vector.dimensions`: $dimension, "
        "`vector.similarity_function`: 'cosine'}}"
    )


_M1 = (
    ("fact_id", _unique("fact_id", "Fact", "id")),
    ("episode_id", _unique("episode_id", "Episode", "id")),
    ("consolidation_run_id", _unique("consolidation_run_id", "ConsolidationRun", "id")),
    ("graphmem_schema_key", _unique("graphmem_schema_key", "GraphmemSchema", "key")),
    (
        "graphmem_migration_version",
        _unique("graphmem_migration_version", "GraphmemMigration", "version"),
    ),
    ("fact_ns", _range("fact_ns", "Fact", "ns")),
    ("fact_ns_status", _range("fact_ns_status", "Fact", "ns", "status")),
    ("fact_ns_recorded_at", _range("fact_ns_recorded_at", "Fact", "ns", "recorded_at")),
    ("fact_ns_text_hash", _range("fact_ns_text_hash", "Fact", "ns", "text_hash")),
    ("fact_ns_source", _range("fact_ns_source", "Fact", "ns", "source")),
    ("episode_ns", _range("episode_ns", "Episode", "ns")),
    ("episode_ns_session", _range("episode_ns_session", "Episode", "ns", "session_id")),
    ("episode_ns_external_id", _range("episode_ns_external_id", "Episode", "ns", "external_id")),
    ("episode_ns_content_hash", _range("episode_ns_content_hash", "Episode", "ns", "content_hash")),
    ("episode_ns_occurred_at", _range("episode_ns_occurred_at", "Episode", "ns", "occurred_at")),
    (
        "consolidation_run_ns_started_at",
        _range("consolidation_run_ns_started_at", "ConsolidationRun", "ns", "started_at"),
    ),
    ("tombstone_ns_text_hash", _range("tombstone_ns_text_hash", "Tombstone", "ns", "text_hash")),
)
_M2 = (
    ("fact_text", _fulltext("fact_text", "Fact", "text")),
    ("episode_content", _fulltext("episode_content", "Episode", "content")),
)
_M3 = tuple((name, _vector(name, label)) for name, label in VECTOR_INDEXES.items())
_M4 = (
    ("graphmem_lock_key", _unique("graphmem_lock_key", "GraphmemLock", "key")),
    ("fact_ns_pinned", _range("fact_ns_pinned", "Fact", "ns", "pinned")),
    ("tombstone_ns_fact_id", _range("tombstone_ns_fact_id", "Tombstone", "ns", "fact_id")),
    (
        "tombstone_ns_episode_id",
        _range("tombstone_ns_episode_id", "Tombstone", "ns", "episode_id"),
    ),
)


_M5 = (
    ("fact_ns_id", _range("fact_ns_id", "Fact", "ns", "id")),
    ("episode_ns_id", _range("episode_ns_id", "Episode", "ns", "id")),
    ("episode_ns_recorded_at", _range("episode_ns_recorded_at", "Episode", "ns", "recorded_at")),
)

_M6 = (
    (
        "consolidation_state_ns",
        _unique("consolidation_state_ns", "ConsolidationState", "ns"),
    ),
    (
        "consolidation_change_ns_run",
        _range("consolidation_change_ns_run", "ConsolidationChange", "ns", "run"),
    ),
)

_M7 = (
    (
        "consolidation_record_ns",
        _range("consolidation_record_ns", "ConsolidationRecord", "ns"),
    ),
    (
        "consolidation_change_ns_fact",
        _range("consolidation_change_ns_fact", "ConsolidationChange", "ns", "fact_id"),
    ),
    ("tombstone_ns_erasure", _range("tombstone_ns_erasure", "Tombstone", "ns", "erasure")),
)

_M8 = (
    ("fact_ns_retired_at", _range("fact_ns_retired_at", "Fact", "ns", "retired_at")),
    ("tombstone_ns_at", _range("tombstone_ns_at", "Tombstone", "ns", "at")),
)


#: The statements that create them with their filter properties (migration 9's, without its
#: drops), on servers with in-index filtering.
FILTERED_VECTOR_STATEMENTS = {
    name: _vector(name, label, filtered=True) for name, label in VECTOR_INDEXES.items()
}
# Migration 9 runs only on a server with in-index filtering; on one without, it is recorded and
# :func:`graphmem.store.schema.apply_schema` runs it once the server has it (after an upgrade).
_M9 = tuple(
    (name, f"DROP INDEX {name} IF EXISTS;{statement}")
    for name, statement in FILTERED_VECTOR_STATEMENTS.items()
)

# Migration 10: the fulltext indexes hold the namespace too, which recall's queries require.
_M10 = tuple(
    (name, f"DROP INDEX {name} IF EXISTS;{_fulltext(name, label, prop, with_ns=True)}")
    for name, label, prop in (
        ("fact_text", "Fact", "text"),
        ("episode_content", "Episode", "content"),
    )
)


# Migration 11: API keys, looked up by their public id (``graphmem serve``).
_M11 = (("api_key_id", _unique("api_key_id", "GraphmemApiKey", "id")),)

# Migration 12: the hot tier of a namespace, which every context reads.
_M12 = (("fact_ns_tier", _range("fact_ns_tier", "Fact", "ns", "tier")),)

# Migration 13: a message's speaker is searched with its words, and the message after one in
# its session is found with one index seek.
_EPISODE_CONTENT = _fulltext(
    "episode_content", "Episode", "content", "speaker", with_ns=True, rebuilt_in=13
)
_M13 = (
    ("episode_content", f"DROP INDEX episode_content IF EXISTS;{_EPISODE_CONTENT}"),
    (
        "episode_ns_session_occurred_at",
        _range("episode_ns_session_occurred_at", "Episode", "ns", "session_id", "occurred_at"),
    ),
)


def _migration(
    version: int, name: str, items: Sequence[tuple[str, str]], *, needs_search: bool = False
) -> Migration:
    return Migration(
        version=version,
        name=name,
        statements=tuple(stmt for _, stmt in items),
        creates=tuple(index for index, _ in items),
        needs_search=needs_search,
    )


MIGRATIONS: tuple[Migration, ...] = (
    _migration(1, "constraints and range indexes", _M1),
    _migration(2, "fulltext indexes on Fact.text and Episode.content", _M2),
    _migration(3, "vector indexes on Fact.embedding and Episode.embedding", _M3),
    _migration(4, "write locks, pinned facts and tombstone lookups", _M4),
    _migration(5, "facts and episodes of a namespace in id order, episodes by recording", _M5),
    _migration(6, "consolidation: one gate per namespace, the changes of each run", _M6),
    _migration(7, "erasure: the records and changes that show a fact, tombstones by erasure", _M7),
    _migration(8, "audits: facts by retirement, tombstones by erasure time", _M8),
    _migration(
        9,
        "vector indexes filter by namespace (and a fact's status) inside the index, on "
        "servers with Cypher's SEARCH clause (Neo4j 2026.01+)",
        _M9,
        needs_search=True,
    ),
    _migration(
        10, "fulltext indexes hold the namespace, so that searches are confined to it", _M10
    ),
    _migration(11, "API keys of graphmem serve, unique by id", _M11),
    _migration(12, "facts of a namespace by tier (the hot tier opens every context)", _M12),
    _migration(
        13,
        "episodes searched by speaker as well as content; episodes of a session in time order",
        _M13,
    ),
)
LATEST_VERSION = MIGRATIONS[-1].version
ALL_INDEXES = tuple(sorted(name for m in MIGRATIONS for name in m.creates))
#: The statements of migration 3, which create the vector indexes.
VECTOR_STATEMENTS = tuple(stmt for _, stmt in _M3)


@dataclass(frozen=True)
class IndexState:
    name: str
    type: str
    state: str
    population: float
    labels: tuple[str, ...]
    properties: tuple[str, ...]
    options: dict[str, Any] = field(compare=False, repr=False)
    failure: str = ""
    #: Whether a constraint owns the index (a uniqueness constraint, for graphmem's).
    unique: bool = False


def vector_dimension(index: IndexState) -> int | None:
    """The dimension a vector index was built for (None for other indexes)."""
    dimension = index.options.get("indexConfig", {}).get("vector.dimensions")
    return None if dimension is None else int(dimension)


def check_shapes(indexes: Sequence[IndexState], recorded: Collection[int]) -> None:
    """Refuse indexes that carry graphmem's names but cover something else, or that are of
    another kind or built with other settings than graphmem's searches depend on. An index
    as an earlier migration built it passes while the graph has not recorded (``recorded``,
    the versions it has) the migration that builds it again."""
    foreign, different = [], []
    for index in indexes:
        shape = INDEX_SHAPES.get(index.name)
        if shape is None:
            continue
        rebuilt_in = shape.replaced_by(index.properties)
        if index.labels != (shape.label,) or not (shape.covers(index.properties) or rebuilt_in):
            found = f":{'|'.join(index.labels)}({', '.join(index.properties)})"
            needed = f":{shape.label}({', '.join(shape.properties)})"
            foreign.append(f"{index.name!r} covers {found}, graphmem needs {needed}")
        elif rebuilt_in in recorded:
            different.append(
                f"{index.name!r} covers :{shape.label}({', '.join(index.properties)}) as "
                f"before migration {rebuilt_in}, which the graph records, graphmem needs "
                f":{shape.label}({', '.join(shape.properties + shape.filters)})"
            )
        elif problem := _shape_difference(index, shape):
            different.append(f"{index.name!r} {problem}")
    if foreign:
        raise SchemaError(
            "indexes with graphmem's names already exist for something else (another "
            "application created them; graphiti-core, for one, has an 'episode_content' index): "
            + "; ".join(foreign)
            + ". Give graphmem a database of its own, or drop those indexes."
        )
    if different:
        raise SchemaError(
            "indexes with graphmem's names were built differently from graphmem's own: "
            + "; ".join(different)
            + ". Drop them and run `graphmem init`, which creates them as graphmem needs them."
        )


def other_clashes(missing: Collection[str], others: Sequence[Mapping[str, Any]]) -> list[str]:
    """The indexes under other names (``others``: rows of name, type, labels, properties and
    owning constraint) that cover what graphmem's ``missing`` ones would (as their current
    migration builds them), each told with the index of graphmem's whose place it takes."""
    clashes = []
    for name in missing:
        shape = INDEX_SHAPES[name]
        for row in others:
            properties = tuple(row["properties"])
            if (
                row["type"] == shape.type
                and tuple(row["labels"]) == (shape.label,)
                and shape.covers(properties)
            ):
                owner = f" of constraint {row['constraint']!r}" if row["constraint"] else ""
                clashes.append(
                    f"{row['name']!r} ({row['type']}{owner}) covers "
                    f":{shape.label}({', '.join(properties)}), where graphmem's "
                    f"{name!r} belongs"
                )
    return clashes


def _shape_difference(index: IndexState, shape: IndexShape) -> str:
    """How ``index`` (which covers what ``shape`` covers) differs from it; empty if it does
    not."""
    if index.type != shape.type:
        return f"is a {index.type} index, graphmem needs a {shape.type} index"
    if shape.unique and not index.unique:
        return "has no uniqueness constraint, graphmem needs one"
    config = index.options.get("indexConfig") or {}
    for key, wanted in shape.config.items():
        found = config.get(key)
        same = (
            isinstance(found, str) and found.lower() == wanted.lower()
            if isinstance(wanted, str)
            else found is wanted
        )
        if not same:
            return f"has {key} {found!r}, graphmem needs {wanted!r}"
    return ""


class EmbedderInfo(Protocol):
    """What the schema needs to know of an embedder."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...


def check_embedder(
    state: Mapping[str, Any] | None, indexes: Sequence[IndexState], embedder: EmbedderInfo
) -> None:
    """Refuse ``embedder`` if the recorded one, or an existing vector index, differs, and any
    embedder while a re-embedding has not finished."""
    if state is not None and state.get("reembedding_model") is not None:
        raise SchemaError(
            f"the graph is being re-embedded with {state['reembedding_model']!r} "
            f"({state['reembedding_dimension']}-d vectors), started at "
            f"{state['reembedding_started_at']} and not finished, so its vectors are mixed: "
            "run `graphmem reembed` with that model to finish it"
        )
    if state is not None and state["embedder_model"] is not None:
        model, dimension = state["embedder_model"], int(state["embedding_dimension"])
        if dimension != embedder.dimension or model != embedder.model_id:
            # A graph recorded under a local model's folder name, before identities by content.
            hint = (
                legacy_mismatch_hint(model, embedder) or precision_mismatch_hint(model, embedder)
                if dimension == embedder.dimension
                else ""
            )
            raise EmbedderMismatchError(
                graph_model=model,
                graph_dimension=dimension,
                embedder_model=embedder.model_id,
                embedder_dimension=embedder.dimension,
                hint=hint,
            )
    # Vector indexes made by hand or by an interrupted run, before the embedder was recorded.
    for index in indexes:
        if index.name not in VECTOR_INDEXES:
            continue
        built_for = vector_dimension(index)
        if built_for is not None and built_for != embedder.dimension:
            raise EmbedderMismatchError(
                graph_model=f"unrecorded model (index {index.name})",
                graph_dimension=built_for,
                embedder_model=embedder.model_id,
                embedder_dimension=embedder.dimension,
            )
