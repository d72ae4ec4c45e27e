"""What an import accepts: exactly what graphmem's own export writes, checked record by record
before anything of it reaches the database.

Each node record carries one label of :data:`NODES`, a key that is the one the export gives
such a node, and only the properties graphmem writes on that label, each of its kind
(:class:`Kind`): an id in graphmem's format, a text within the limit ``remember`` or
``ingest`` enforces, a time typed as one, an embedding of the graph's dimension. Each
relationship record is of a type of :data:`EDGES`, between labels that type joins, with the
properties graphmem writes on it, and names nodes the export held before it. Anything else (an
internal label such as :GraphmemApiKey, a second label, a property the label does not have,
an oversized or malformed value) is an :class:`~graphmem.errors.ExportFormatError` naming the
record. Pure: no I/O, so every rule is a unit test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphmem.core.namespaces.document import read_vector
from graphmem.core.namespaces.kinds import (
    FLAG,
    HASH,
    ID,
    IDS,
    INTEGER,
    LABEL,
    MAX_LISTED,
    METADATA,
    NUMBER,
    PLAN,
    REASON,
    TIER,
    TIME,
    VECTOR,
    Spec,
    json_text,
    listed,
    one_of,
    text,
)
from graphmem.errors import ExportFormatError
from graphmem.models.fields import (
    MAX_EPISODE_CHARS,
    MAX_IDS,
    MAX_METADATA_BYTES,
    MAX_TAGS,
    MAX_TEXT_CHARS,
)

#: The most a record may take as one line: the largest record graphmem writes is far smaller
#: (a fact: 10,000 characters, 16 KiB of metadata and its embedding).
MAX_RECORD_BYTES = 16 * 1024 * 1024
#: About the most an import's batch of nodes holds before it is staged, whatever its count:
#: the memory an import takes is bounded by this, not by the batch size times the largest record.
MAX_BATCH_BYTES = 8 * 1024 * 1024

_COMMON_FACT: Spec = {
    "ns": LABEL,
    "text_hash": HASH,
    "recorded_at": TIME,
    "retired_at": TIME,
}
#: Each label an export writes, with every property graphmem writes on it.
NODES: Mapping[str, Spec] = {
    "Fact": {
        **_COMMON_FACT,
        "id": ID,
        "text": text(MAX_TEXT_CHARS),
        "embedding": VECTOR,
        "status": one_of("active", "superseded", "merged", "retracted"),
        "valid_from": TIME,
        "valid_to": TIME,
        "stated_valid_to": TIME,
        "valid_from_set_at": TIME,
        "recorded_by": LABEL,
        "superseded_by": ID,
        "source": LABEL,
        "tags": listed(LABEL, MAX_TAGS),
        "metadata": METADATA,
        "pinned": FLAG,
        "importance": NUMBER,
        "access_count": INTEGER,
        "last_accessed_at": TIME,
        "previously_forgotten": FLAG,
        "retraction_reason": REASON,
        "retracted_by": LABEL,
        "tier": TIER,
        "tier_at": TIME,
        "tier_by": LABEL,
        "summary_by": ID,
    },
    "Episode": {
        "id": ID,
        "ns": LABEL,
        "content": text(MAX_EPISODE_CHARS),
        "content_hash": HASH,
        "embedding": VECTOR,
        "recorded_by": LABEL,
        "role": LABEL,
        "speaker": LABEL,
        "session_id": LABEL,
        "external_id": LABEL,
        "occurred_at": TIME,
        "recorded_at": TIME,
        "metadata": METADATA,
        "access_count": INTEGER,
        "last_accessed_at": TIME,
        "previously_forgotten": FLAG,
        "extracted_by": listed(LABEL, MAX_IDS),
    },
    "Tombstone": {
        **_COMMON_FACT,
        "kind": one_of("fact", "episode"),
        "fact_id": ID,
        "episode_id": ID,
        "source_hash": HASH,
        "session_hash": HASH,
        "occurred_at": TIME,
        "status_at_erasure": one_of("active", "superseded", "merged", "retracted"),
        "at": TIME,
        "reason": REASON,
        "actor": LABEL,
        "erasure": ID,
    },
    "ConsolidationRun": {
        "id": ID,
        "ns": LABEL,
        "started_at": TIME,
        "finished_at": TIME,
        "status": LABEL,
        "proposer": LABEL,
        "model": LABEL,
        "started_by": LABEL,
        "watermark_before": TIME,
        "watermark_after": TIME,
        "llm_calls": INTEGER,
        "prompt_tokens": INTEGER,
        "completion_tokens": INTEGER,
        "clusters": INTEGER,
        "clusters_done": INTEGER,
        "clusters_failed": INTEGER,
        "new_facts": INTEGER,
        "timings": json_text(MAX_METADATA_BYTES, dict),
        "error": REASON,
        "undone_at": TIME,
        "undone_by": LABEL,
    },
    "ConsolidationState": {
        "ns": LABEL,
        "watermark": TIME,
        "lock_run": ID,
        "lock_expires_at": TIME,
        "last_started_at": TIME,
        "last_finished_at": TIME,
        "recent": IDS,
        "failures": IDS,
    },
    "ConsolidationRecord": {
        "ns": LABEL,
        "run": ID,
        "at": TIME,
        "clusters": listed(INTEGER, MAX_LISTED),
        "plans": PLAN,
        "applied": PLAN,
        "rejected": PLAN,
        "review": PLAN,
        "facts": IDS,
        "erased_at": TIME,
        "erased_by": LABEL,
    },
    "ConsolidationChange": {
        "ns": LABEL,
        "run": ID,
        "cluster": INTEGER,
        "fact_id": ID,
        "at": TIME,
        "kind": one_of("tier"),
        "reason": REASON,
        **{
            f"{side}_{name}": kind
            for side in ("before", "after")
            for name, kind in {
                "status": one_of("active", "superseded", "merged", "retracted"),
                "retired_at": TIME,
                "valid_from": TIME,
                "valid_to": TIME,
                "stated_valid_to": TIME,
                "valid_from_set_at": TIME,
                "superseded_by": ID,
                "pinned": FLAG,
                "retraction_reason": REASON,
                "retracted_by": LABEL,
                "tier": TIER,
                "tier_at": TIME,
                "tier_by": LABEL,
            }.items()
        },
    },
}
#: The properties each label must have: what identifies the node, and what a search reads.
REQUIRED: Mapping[str, frozenset[str]] = {
    "Fact": frozenset({"id", "ns", "text", "status", "recorded_at"}),
    "Episode": frozenset({"id", "ns", "content", "recorded_at"}),
    "Tombstone": frozenset({"ns", "kind", "at"}),
    "ConsolidationRun": frozenset({"id", "ns", "started_at", "status"}),
    "ConsolidationState": frozenset({"ns"}),
    "ConsolidationRecord": frozenset({"ns", "run", "at"}),
    "ConsolidationChange": frozenset({"ns", "run", "cluster", "fact_id", "at"}),
}

_EDGE: Spec = {"at": TIME, "actor": LABEL, "reason": REASON, "carried_from": ID}
_FACTS = frozenset({"Fact", "Tombstone"})
_MESSAGES = frozenset({"Episode", "Tombstone"})
_ANY = frozenset({"Fact", "Episode", "Tombstone"})


@dataclass(frozen=True)
class Edge:
    """A relationship type an export writes: the labels its start and its end may carry (an
    erased fact or message is a tombstone that keeps its relationships), and its properties."""

    starts: frozenset[str]
    ends: frozenset[str]
    properties: Spec


#: Each relationship type an export writes.
EDGES: Mapping[str, Edge] = {
    "SUPERSEDES": Edge(_FACTS, _FACTS, _EDGE),
    "MERGED_INTO": Edge(_FACTS, _FACTS, _EDGE),
    "REFERENCES": Edge(_FACTS, _FACTS, _EDGE),
    "SUMMARIZES": Edge(_FACTS, _FACTS, _EDGE),
    "CONTRADICTS": Edge(
        _FACTS,
        _FACTS,
        {**_EDGE, "resolved_at": TIME, "resolution": REASON, "resolved_by": LABEL, "kept": ID},
    ),
    "DERIVED_FROM": Edge(_FACTS, _MESSAGES, _EDGE),
    "FLAGGED_BY": Edge(
        _ANY,
        _ANY,
        {
            **_EDGE,
            "ns": LABEL,
            "event": LABEL,
            "relation": LABEL,
            "by": ID,
            "closed_at": TIME,
            "closed_by": LABEL,
            "closing": LABEL,
            "closing_reason": REASON,
        },
    ),
    "RECORDED": Edge(frozenset({"ConsolidationRun"}), frozenset({"ConsolidationRecord"}), {}),
}
_NODE_FIELDS = frozenset({"record", "labels", "key", "properties", "types"})
_EDGE_FIELDS = frozenset({"record", "type", "start", "end", "properties", "types"})
_END_FIELDS = frozenset({"labels", "key"})


def node_key(label: str, properties: Mapping[str, Any]) -> str | None:
    """The key an export gives a node of ``label`` with these properties (as the
    ``export_key`` fragment computes it), None when they do not make one."""
    p = properties
    if label in ("Fact", "Episode", "ConsolidationRun"):
        return p.get("id")
    if label == "Tombstone":
        erased = [p[k] for k in ("fact_id", "episode_id") if k in p]
        return erased[0] if len(erased) == 1 else None
    if label == "ConsolidationState":
        return "state"
    if label == "ConsolidationRecord":
        clusters = "".join(f"{c}," for c in p.get("clusters", []))
        return f"record:{p.get('run')}:{clusters}"
    return f"change:{p.get('run')}:{p.get('cluster')}:{p.get('fact_id')}"


class Contract:
    """The checks of one import: each node record (:meth:`node`) and relationship record
    (:meth:`edge`) in the order of the file, against the export's namespace ``ns`` and the
    graph's embedding ``dimension``. It keeps the key and label of each node seen, so that a
    relationship may name only nodes of the export (never another namespace's)."""

    def __init__(self, ns: str, dimension: int) -> None:
        self.ns, self.dimension = ns, dimension
        self.seen: dict[str, set[str]] = {label: set() for label in NODES}

    def node(self, record: Mapping[str, Any], line: int) -> str:
        """The node record's label, once every rule holds for it."""
        _fields(record, _NODE_FIELDS, "node", line)
        label = _one_label(record["labels"], line)
        properties = record.get("properties") or {}
        self._properties(properties, record.get("types") or {}, NODES[label], label, line)
        missing = sorted(REQUIRED[label] - set(properties))
        if missing:
            raise ExportFormatError(f"the {label} node lacks {', '.join(missing)}", line=line)
        if label == "Tombstone" and _kind_of(properties) != properties["kind"]:
            raise ExportFormatError("the tombstone's kind does not match its id", line=line)
        key = record["key"]
        if key != node_key(label, properties):
            raise ExportFormatError(
                f"the {label} node's key {_brief(key)} is not the one its properties give",
                line=line,
            )
        if key in self.seen[label]:
            raise ExportFormatError(f"the export names node {key!r} twice", line=line)
        self.seen[label].add(key)
        return label

    def edge(self, record: Mapping[str, Any], line: int) -> None:
        _fields(record, _EDGE_FIELDS, "relationship", line)
        kind = record["type"]
        edge = EDGES.get(kind)
        if edge is None:
            raise ExportFormatError(
                f"relationship type {_brief(kind)} is not one a graphmem export writes",
                line=line,
            )
        for side, allowed in (("start", edge.starts), ("end", edge.ends)):
            end = record[side]
            _fields(end, _END_FIELDS, f"relationship's {side}", line)
            label = _one_label(end["labels"], line)
            if label not in allowed:
                raise ExportFormatError(
                    f"a {kind} relationship cannot {'start' if side == 'start' else 'end'} "
                    f"at a {label} node",
                    line=line,
                )
            if end["key"] not in self.seen[label]:
                raise ExportFormatError(
                    f"the relationship names {_brief(end['key'])}, a {label} node the export "
                    "does not hold",
                    line=line,
                )
        properties = record.get("properties") or {}
        self._properties(properties, record.get("types") or {}, edge.properties, kind, line)

    def _properties(
        self,
        properties: Mapping[str, Any],
        types: Mapping[str, Any],
        spec: Spec,
        owner: str,
        line: int,
    ) -> None:
        if not isinstance(properties, Mapping) or not isinstance(types, Mapping):
            raise ExportFormatError("properties and types must be objects", line=line)
        if set(types) - set(properties):
            unknown = ", ".join(sorted(map(str, set(types) - set(properties))))
            raise ExportFormatError(f"types names what properties do not: {unknown}", line=line)
        for key, value in properties.items():
            kind = spec.get(key)
            if kind is None:
                raise ExportFormatError(
                    f"property {_brief(key)} is not one graphmem writes on {owner}", line=line
                )
            typed = types.get(key)
            if typed != kind.typed:
                raise ExportFormatError(
                    f"property {key!r} of {owner} is typed {typed!r}; a graphmem export types "
                    f"it {kind.typed!r}",
                    line=line,
                )
            why = kind.check(value)
            if why is None and kind is VECTOR:
                why = self._vector(key, value)
            if why is None and key == "ns" and value != self.ns:
                why = f"is not the export's namespace {self.ns!r}"
            if why is not None:
                raise ExportFormatError(f"property {key!r} of {owner} {why}", line=line)

    def _vector(self, key: str, value: Any) -> str | None:
        if not isinstance(value, str) or len(value) > 4 * self.dimension * 2 + 8:
            return f"is not an embedding of {self.dimension} values"
        try:
            size = len(read_vector(key, value))
        except ExportFormatError:
            return "is not a valid vector"
        if size != self.dimension:
            return f"has {size} values; the graph's embeddings have {self.dimension}"
        return None


def _fields(record: Any, allowed: frozenset[str], what: str, line: int) -> None:
    if not isinstance(record, Mapping):
        raise ExportFormatError(f"the {what} is not an object", line=line)
    extra = sorted(set(record) - allowed)
    if extra:
        raise ExportFormatError(
            f"the {what} record has fields an export does not write: {', '.join(extra)}",
            line=line,
        )


def _one_label(labels: Any, line: int) -> str:
    """The one label a node of an export carries; anything else is refused, an internal
    label (:GraphmemApiKey, :GraphmemMigration, :GraphmemSchema, :GraphmemLock) above all."""
    if not (isinstance(labels, list) and len(labels) == 1 and labels[0] in NODES):
        shown = ", ".join(_brief(v) for v in labels) if isinstance(labels, list) else "none"
        raise ExportFormatError(
            f"the labels {shown} are not one label a graphmem export writes ({', '.join(NODES)})",
            line=line,
        )
    return str(labels[0])


def _kind_of(properties: Mapping[str, Any]) -> str:
    return "fact" if "fact_id" in properties else "episode"


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def weight(properties: Mapping[str, Any]) -> int:
    """About how many bytes a checked record's values hold (texts by their length)."""
    total = 0
    for value in properties.values():
        items = value if isinstance(value, list) else [value]
        total += sum(len(v) if isinstance(v, str) else 8 for v in items)
    return total
