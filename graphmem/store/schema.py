"""graphmem's graph schema: the index and constraint DDL, applied as recorded migrations.

``apply_schema`` is idempotent. It refuses a graph built with another embedder, or one with
migrations of a newer graphmem, applies the migrations the graph has not recorded (every
statement is ``IF NOT EXISTS``), records them as ``:GraphmemMigration`` nodes and the embedder
as the ``:GraphmemSchema`` node, creates again any index of a recorded migration that is gone
(dropped by hand), then waits until every index is ONLINE. ``check_schema`` does the same
checks without writing anything. The statements, grouped into migrations, and the shape each
index must have are in :mod:`graphmem.store.indexes`.

Migrations are immutable once released: a change to the schema is a new migration.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from graphmem.errors import SchemaError
from graphmem.store import db
from graphmem.store.cypher import query
from graphmem.store.indexes import (
    ALL_INDEXES,
    FILTERED_VECTOR_STATEMENTS,
    LATEST_VERSION,
    MIGRATIONS,
    VECTOR_FILTERS,
    VECTOR_INDEXES,
    VECTOR_STATEMENTS,
    EmbedderInfo,
    IndexState,
    check_embedder,
    check_shapes,
    other_clashes,
    vector_dimension,
)

if TYPE_CHECKING:
    import neo4j

SCHEMA_KEY = "graphmem"


@dataclass(frozen=True)
class ChecksumMismatch:
    """A recorded migration whose checksum differs from this graphmem's migration of that
    version: it was applied from other statements (by another program, or an altered record).
    Its indexes are still checked for what they are, so a difference that matters is refused
    by that check; this says where the record and the code part."""

    version: int
    name: str
    recorded: str | None
    expected: str

    def describe(self) -> str:
        recorded = self.recorded or "none"
        return (
            f"migration {self.version} ({self.name}) was recorded with checksum {recorded}, "
            f"this graphmem's is {self.expected}"
        )


@dataclass(frozen=True)
class SchemaReport:
    """The schema as found (and, after ``apply_schema``, as left)."""

    version: int
    latest_version: int
    applied_now: tuple[int, ...]
    embedder_model: str | None
    embedding_dimension: int | None
    indexes: tuple[IndexState, ...]
    #: Indexes of recorded migrations that were missing and that ``apply_schema`` created again.
    restored: tuple[str, ...] = ()
    #: Recorded migrations whose checksums differ from this graphmem's.
    checksum_mismatches: tuple[ChecksumMismatch, ...] = ()

    @property
    def up_to_date(self) -> bool:
        return self.version >= self.latest_version

    @property
    def filtered_search(self) -> bool:
        """Whether both vector indexes carry their filter properties, so that searches filter
        by namespace inside them (Cypher's ``SEARCH``, Neo4j 2026.01+)."""
        return filtered_vector_indexes(self.indexes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "latest_version": self.latest_version,
            "applied_now": list(self.applied_now),
            "restored": list(self.restored),
            "checksum_mismatches": [asdict(m) for m in self.checksum_mismatches],
            "embedder_model": self.embedder_model,
            "embedding_dimension": self.embedding_dimension,
            "filtered_search": self.filtered_search,
            "indexes": [
                {
                    "name": i.name,
                    "type": i.type,
                    "state": i.state,
                    "labels": list(i.labels),
                    "properties": list(i.properties),
                }
                for i in self.indexes
            ],
        }


def apply_schema(
    driver: neo4j.Driver,
    *,
    database: str,
    embedder: EmbedderInfo,
    timeout: float = 300.0,
) -> SchemaReport:
    """Bring the graph's schema up to date for ``embedder`` and wait until it is ONLINE."""
    check_dimension(embedder)
    state, existing = _read_state(driver, database)
    check_embedder(state, existing, embedder)
    recorded = _recorded_checksums(driver, database)
    applied = set(recorded)
    check_shapes(existing, applied)
    _check_others(driver, database, existing)
    search = server_has_search(driver, database)
    newly = _migrate(driver, database, applied, embedder.dimension, search=search)
    restored = _restore_missing(
        driver, database, applied, existing, embedder, search=search, since=newly
    )
    if search:
        _filter_vector_indexes(driver, database, embedder.dimension)
    claimed = db.execute(
        driver,
        database,
        query("schema_state_claim"),
        key=SCHEMA_KEY,
        model=embedder.model_id,
        dimension=embedder.dimension,
    )[0]
    check_embedder(claimed, (), embedder)
    indexes = await_indexes_online(driver, database=database, timeout=timeout)
    recorded.update((m.version, m.checksum) for m in MIGRATIONS if m.version in newly)
    return _report(recorded, claimed, indexes, applied_now=tuple(newly), restored=restored)


def apply_migrations(
    driver: neo4j.Driver, *, database: str, timeout: float = 300.0
) -> tuple[int, ...]:
    """Apply the migrations a graph lacks, without the embedder check of :func:`apply_schema`,
    and wait until every index is ONLINE: for re-embedding, which must finish on a graph that
    an older graphmem left unfinished (every client, and ``apply_schema``, refuses such a
    graph). Vector indexes, if missing, are built for the recorded dimension. Returns the
    versions applied."""
    state, existing = _read_state(driver, database)
    applied = set(_recorded_checksums(driver, database))
    check_shapes(existing, applied)
    _check_others(driver, database, existing)
    if state is None or state["embedder_model"] is None:
        raise SchemaError("the graph has no recorded embedder: run `graphmem init` first")
    newly = _migrate(
        driver,
        database,
        applied,
        int(state["embedding_dimension"]),
        search=server_has_search(driver, database),
    )
    created = [name for m in MIGRATIONS if m.version in newly for name in m.creates]
    await_indexes_online(driver, database=database, timeout=timeout, only=created)
    return tuple(newly)


def _migrate(
    driver: neo4j.Driver, database: str, applied: set[int], dimension: int, *, search: bool
) -> list[int]:
    """Apply every migration not in ``applied``, in order; the versions applied. A migration
    that needs in-index filtering is recorded without running on a server without it
    (``search`` false); :func:`apply_schema` runs it once the server has it."""
    newly: list[int] = []
    for migration in MIGRATIONS:
        if migration.version in applied:
            continue
        if search or not migration.needs_search:
            _run_statements(driver, database, migration.statements, dimension)
        db.execute(
            driver,
            database,
            query("migration_record"),
            version=migration.version,
            name=migration.name,
            checksum=migration.checksum,
        )
        newly.append(migration.version)
    return newly


def _restore_missing(
    driver: neo4j.Driver,
    database: str,
    applied: set[int],
    existing: Sequence[IndexState],
    embedder: EmbedderInfo,
    *,
    search: bool,
    since: Collection[int] = (),
) -> tuple[str, ...]:
    """Create again the indexes and constraints of the recorded migrations ``applied`` that
    are not in ``existing`` (dropped by hand since): a recorded migration is not run again,
    and without them searches fail and waiting for them to be ONLINE never ends. Each is
    made, without its drops, by the last migration that creates it and can run on this
    server (``search``: one with in-index filtering); what those that ran ``since``
    ``existing`` was read create is there. The names created."""
    present = {index.name for index in existing}
    latest: dict[str, str] = {}
    for migration in MIGRATIONS:
        if search or not migration.needs_search:
            if migration.version in applied:
                latest.update(zip(migration.creates, migration.creating, strict=True))
            present.update(migration.creates if migration.version in since else ())
    missing = [(name, statement) for name, statement in latest.items() if name not in present]
    if missing:
        # The vector indexes may be missing because a re-embedding began since the caller
        # checked the state; it builds them for its own model, so that is refused here.
        check_embedder(read_state(driver, database), (), embedder)
        _run_statements(driver, database, [stmt for _, stmt in missing], embedder.dimension)
    return tuple(name for name, _ in missing)


def _run_statements(
    driver: neo4j.Driver, database: str, statements: Sequence[str], dimension: int = 0
) -> None:
    """Run schema statements in order (an entry may hold several, separated by ``;``),
    ``$dimension`` bound to ``dimension``, each in a managed transaction of its own, so that
    the driver retries the deadlocks that schema statements of processes starting at once can
    meet; later reads of the driver's default bookmark manager see them."""
    with (
        db.driver_errors(),
        driver.session(
            database=database, bookmark_manager=driver.execute_query_bookmark_manager
        ) as session,
    ):
        for entry in statements:
            for statement in entry.split(";"):
                # Another process starting at once may have created the same index first.
                done_elsewhere = _CREATED_ELSEWHERE if "IF NOT EXISTS" in statement else ()
                with db.passing_over(done_elsewhere):
                    session.execute_write(_run_statement, statement, dimension)


_KINDS = ("EquivalentSchemaRule", "Index", "Constraint", "IndexWithName", "ConstraintWithName")
#: Neo4j's answers to a ``CREATE … IF NOT EXISTS`` whose index another transaction has just
#: created: the index is there, which is what the statement asked for (two that commit at
#: the same moment clash by the index's name, ``IndexWithNameAlreadyExists``).
_CREATED_ELSEWHERE = {f"Neo.ClientError.Schema.{c}AlreadyExists" for c in _KINDS}


def _run_statement(tx: neo4j.ManagedTransaction, statement: str, dimension: int) -> None:
    tx.run(statement, {"dimension": dimension}).consume()


def check_schema(driver: neo4j.Driver, *, database: str, embedder: EmbedderInfo) -> SchemaReport:
    """Verify, without writing, that the schema is current and built for ``embedder``."""
    check_dimension(embedder)
    state, indexes = _read_state(driver, database)
    check_embedder(state, indexes, embedder)
    recorded = _recorded_checksums(driver, database)
    check_shapes(indexes, recorded)
    _check_others(driver, database, indexes)
    report = _report(recorded, state, indexes)
    if not report.up_to_date:
        raise SchemaError(
            f"the graph's schema is at version {report.version}, this graphmem needs "
            f"{report.latest_version}: run `graphmem init`"
        )
    missing = sorted(set(ALL_INDEXES) - {i.name for i in report.indexes})
    if missing:
        raise SchemaError(
            f"indexes of the graph's schema are missing (dropped?): {', '.join(missing)}: "
            "run `graphmem init` to create them again"
        )
    offline = [i.name for i in report.indexes if i.state != "ONLINE"]
    if offline:
        raise SchemaError(f"indexes not ONLINE yet: {', '.join(offline)}")
    return report


def read_state(driver: neo4j.Driver, database: str) -> Mapping[str, Any] | None:
    """The ``:GraphmemSchema`` node's record (``schema_state``), or None before any schema."""
    rows = db.execute(driver, database, query("schema_state"), key=SCHEMA_KEY)
    return rows[0] if rows else None


def drop_vector_indexes(driver: neo4j.Driver, *, database: str) -> None:
    """Drop the vector indexes (re-embedding rebuilds them for the new dimension)."""
    _run_statements(driver, database, [f"DROP INDEX {name} IF EXISTS" for name in VECTOR_INDEXES])


def create_vector_indexes(driver: neo4j.Driver, *, database: str, dimension: int) -> None:
    """Create the vector indexes for ``dimension``-d vectors, if missing, with their filter
    properties where the server has in-index filtering; one for another dimension (left by
    an interrupted or overtaken re-embedding) is replaced."""
    built = vector_index_dimensions(driver, database)
    wrong = [name for name in VECTOR_INDEXES if built.get(name, dimension) != dimension]
    drops = [f"DROP INDEX {name} IF EXISTS" for name in wrong]
    search = server_has_search(driver, database)
    creates = tuple(FILTERED_VECTOR_STATEMENTS.values()) if search else VECTOR_STATEMENTS
    _run_statements(driver, database, [*drops, *creates], dimension)
    if search:
        _filter_vector_indexes(driver, database, dimension)


def server_has_search(driver: neo4j.Driver, database: str) -> bool:
    """Whether the server filters inside vector indexes (Cypher's ``SEARCH``: Neo4j
    2026.01 and later; calendar versions start with the year)."""
    rows = db.execute(driver, database, query("server_version"))
    version = str(rows[0]["version"]) if rows else ""
    try:
        year, month = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return (year, month) >= (2026, 1)


def filtered_vector_indexes(indexes: Sequence[IndexState]) -> bool:
    """Whether both of graphmem's vector indexes in ``indexes`` carry their filter
    properties."""
    found = {i.name: i.properties for i in indexes if i.name in VECTOR_INDEXES}
    return all(found.get(name) == ("embedding", *VECTOR_FILTERS[name]) for name in VECTOR_INDEXES)


def _filter_vector_indexes(driver: neo4j.Driver, database: str, dimension: int) -> None:
    """Build again, with their filter properties, the vector indexes that lack them (made
    before the server had in-index filtering, or by an older graphmem): migration 9's work on
    a graph that recorded it on an older server."""
    for index in _index_states(driver, database):
        filters = VECTOR_FILTERS.get(index.name)
        if filters is not None and index.properties != ("embedding", *filters):
            statement = FILTERED_VECTOR_STATEMENTS[index.name]
            built_for = vector_dimension(index) or dimension
            _run_statements(driver, database, [f"DROP INDEX {index.name}", statement], built_for)


def vector_index_dimensions(driver: neo4j.Driver, database: str) -> dict[str, int]:
    """graphmem's vector indexes that exist, by name, with the dimension each was built for."""
    return {
        index.name: built_for
        for index in _index_states(driver, database)
        if (built_for := vector_dimension(index)) is not None
    }


def await_indexes_online(
    driver: neo4j.Driver,
    *,
    database: str,
    timeout: float = 300.0,
    interval: float = 0.2,
    only: Collection[str] = ALL_INDEXES,
) -> tuple[IndexState, ...]:
    """Wait until every index and constraint graphmem creates (or those named in ``only``)
    is ONLINE."""
    deadline = time.monotonic() + timeout
    while True:
        states = tuple(s for s in _index_states(driver, database) if s.name in only)
        failed = [s for s in states if s.state == "FAILED"]
        if failed:
            details = "; ".join(f"{s.name}: {s.failure}" for s in failed)
            raise SchemaError(f"index population failed: {details}")
        missing = set(only) - {s.name for s in states}
        pending = [s for s in states if s.state != "ONLINE"]
        if not missing and not pending:
            return states
        if time.monotonic() >= deadline:
            waiting = sorted(missing) + [f"{s.name} ({s.population:.0f}%)" for s in pending]
            raise SchemaError(f"indexes not ONLINE after {timeout:.0f} s: {', '.join(waiting)}")
        time.sleep(interval)


def check_dimension(embedder: EmbedderInfo) -> None:
    """Refuse an embedding dimension that Neo4j's vector indexes cannot hold."""
    if not isinstance(embedder.dimension, int) or not 1 <= embedder.dimension <= 4096:
        raise SchemaError(
            f"embedding dimension must be an integer from 1 to 4096 (Neo4j's vector index "
            f"limit); the embedder reports {embedder.dimension!r}"
        )


# --- internals -------------------------------------------------------------------------------


def _read_state(
    driver: neo4j.Driver, database: str
) -> tuple[Mapping[str, Any] | None, tuple[IndexState, ...]]:
    """The recorded embedder (if any) and the states of graphmem's indexes."""
    return read_state(driver, database), _index_states(driver, database)


def _check_others(driver: neo4j.Driver, database: str, existing: Sequence[IndexState]) -> None:
    """Refuse indexes under other names that cover what a missing index of graphmem's would.

    Neo4j keeps one index of a kind per label and property list: ``CREATE ... IF NOT EXISTS``
    then does nothing (or a uniqueness constraint fails), graphmem's index never appears, and
    waiting for it to come ONLINE would last the whole schema wait timeout. Searches name
    graphmem's fulltext and vector indexes, so another's cannot stand in for them."""
    missing = sorted(set(ALL_INDEXES) - {index.name for index in existing})
    if not missing:
        return
    rows = db.execute(driver, database, query("index_others"), names=list(ALL_INDEXES))
    if clashes := other_clashes(missing, rows):
        raise SchemaError(
            "indexes under other names already cover what graphmem's own would, and Neo4j "
            "keeps one index of a kind per label and properties: "
            + "; ".join(clashes)
            + ". Drop those (DROP INDEX, or DROP CONSTRAINT for a constraint's) and run "
            "`graphmem init`, or give graphmem a database of its own."
        )


def refuse_newer_migrations(driver: neo4j.Driver, database: str) -> None:
    """Raise :class:`~graphmem.errors.SchemaError` if the graph records migrations that this
    graphmem does not know (applied by a newer graphmem)."""
    _recorded_checksums(driver, database)


def _recorded_checksums(driver: neo4j.Driver, database: str) -> dict[int, str | None]:
    """The checksum each migration the graph records was recorded with, by version. A graph
    with migrations this graphmem does not know (applied by a newer graphmem) is refused: its
    schema, and what the newer version writes, may differ in ways this one cannot check or
    would undo."""
    rows = db.execute(driver, database, query("migrations_applied"))
    unknown = [r for r in rows if int(r["version"]) > LATEST_VERSION]
    if unknown:
        names = ", ".join(f"{int(r['version'])} ({r['name']})" for r in unknown)
        raise SchemaError(
            f"the graph's schema has migrations newer than this graphmem knows (it knows up to "
            f"version {LATEST_VERSION}): {names}; a newer graphmem applied them, so use that "
            "version (or a later one) with this graph"
        )
    return {int(r["version"]): r["checksum"] for r in rows}


def _index_states(driver: neo4j.Driver, database: str) -> tuple[IndexState, ...]:
    rows = db.execute(driver, database, query("index_states"), names=list(ALL_INDEXES))
    return tuple(
        IndexState(
            name=r["name"],
            type=r["type"],
            state=r["state"],
            population=float(r["population"] or 0.0),
            labels=tuple(r["labels"] or ()),
            properties=tuple(r["properties"] or ()),
            options=dict(r["options"] or {}),
            failure=r["failure"] or "",
            unique=r["constraint"] is not None,
        )
        for r in rows
    )


def _report(
    recorded: Mapping[int, str | None],
    state: Mapping[str, Any] | None,
    indexes: tuple[IndexState, ...],
    *,
    applied_now: tuple[int, ...] = (),
    restored: tuple[str, ...] = (),
) -> SchemaReport:
    version = 0
    for migration in MIGRATIONS:  # the highest version with all earlier ones applied
        if migration.version not in recorded:
            break
        version = migration.version
    mismatches = tuple(
        ChecksumMismatch(m.version, m.name, recorded[m.version], m.checksum)
        for m in MIGRATIONS
        if m.version in recorded and recorded[m.version] != m.checksum
    )
    return SchemaReport(
        version=version,
        latest_version=LATEST_VERSION,
        applied_now=applied_now,
        embedder_model=state["embedder_model"] if state else None,
        embedding_dimension=state["embedding_dimension"] if state else None,
        indexes=indexes,
        restored=restored,
        checksum_mismatches=mismatches,
    )
