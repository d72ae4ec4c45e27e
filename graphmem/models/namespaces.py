"""What the namespace operations return: the listing, an import's outcome and a drop's."""

from __future__ import annotations

from pydantic import Field

from graphmem.models.fields import OutputModel, StoredDatetime

#: Nodes per page of an export, and records per staged batch of an import (the default).
DEFAULT_PAGE = 500
#: The largest page or batch.
MAX_PAGE = 10_000
#: Nodes deleted per transaction by a drop (the default).
DROP_BATCH = 1000


class NamespaceSummary(OutputModel):
    """One namespace as ``namespaces()`` lists it: its counts and its last write.

    ``facts`` counts every fact (``facts_believed`` those still believed, status ``active``;
    ``facts_by_status`` all of them by status), ``episodes`` the stored messages,
    ``forgotten_facts`` and ``forgotten_episodes`` the tombstones ``forget`` left, and
    ``consolidation_runs`` the runs recorded. ``last_write_at`` is the newest time the
    namespace's nodes record: a fact recorded or retired, a message recorded, an erasure, a
    consolidation run started or finished (reads, such as recall's access stamps, are not
    writes). ``import_pending`` counts nodes an import into the namespace staged and has not
    made visible: one under way, or one cut short (the next import into the namespace, or
    dropping it, removes them)."""

    ns: str
    facts: int = 0
    facts_believed: int = 0
    facts_by_status: dict[str, int] = Field(default_factory=dict)
    episodes: int = 0
    forgotten_facts: int = 0
    forgotten_episodes: int = 0
    consolidation_runs: int = 0
    last_write_at: StoredDatetime | None = None
    import_pending: int = 0

    @property
    def empty(self) -> bool:
        """Whether it holds no fact, message, tombstone or consolidation run."""
        return not (
            self.facts
            or self.episodes
            or self.forgotten_facts
            or self.forgotten_episodes
            or self.consolidation_runs
        )


class ImportResult(OutputModel):
    """What ``import_`` made visible in ``ns``, in one transaction after staging it.

    ``nodes`` counts the nodes by label and ``relationships`` the relationships, as the
    export's end record announced them. ``remapped`` maps each id of the export that another
    namespace of this database already held to the new id the import gave it (every reference
    to it was changed too: relationships, ``superseded_by``, tombstones, consolidation records);
    empty when every id was kept. ``tombstones_match`` says whether the imported tombstones'
    keyed hashes were made with this namespace's erasure key, so that a forgotten text coming
    back is still recognised (None when the export holds no tombstone): False after an import
    into another namespace or onto another server, where the tombstones keep the audit trail
    but no longer refuse the erased words."""

    ns: str
    source_ns: str
    format_version: int
    exported_at: str | None = None
    nodes: dict[str, int] = Field(default_factory=dict)
    relationships: int = 0
    remapped: dict[str, str] = Field(default_factory=dict)
    tombstones_match: bool | None = None
    #: Nodes of earlier imports into this namespace that never finished, removed first.
    stale_removed: int = 0
    at: StoredDatetime | None = None


class DropResult(OutputModel):
    """What ``drop_namespace`` removed (or, with ``dry_run``, would remove): ``nodes`` by
    label, the namespace's lock nodes, and ``staged`` nodes of imports into it that never
    finished; ``batches`` counts the transactions it took."""

    ns: str
    dry_run: bool = False
    nodes: dict[str, int] = Field(default_factory=dict)
    locks: int = 0
    staged: int = 0
    batches: int = 0

    @property
    def removed(self) -> int:
        return sum(self.nodes.values()) + self.staged
