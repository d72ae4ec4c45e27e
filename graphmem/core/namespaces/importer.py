"""A namespace import: all or nothing, through a staging namespace.

The records are read once, in order, and written in batches (each one write transaction) into
a staging namespace of the import's own (``~import:<namespace>:<token>``), which no reader
ever names: nothing of the import is visible while it runs. An id another namespace of the
database already holds (fact, episode and run ids are unique across it) gets a new one, and
every reference to it follows (:func:`~graphmem.core.namespaces.document.remapped`): at once
for what comes after it, and, once every id is known, in one pass over the staged nodes for
what came before. Then one transaction checks that the target namespace is still empty and
that everything staged is there, and moves it all into the target namespace: the import
becomes visible whole, or not at all.

Every record is checked against what graphmem's own export writes
(:class:`~graphmem.core.namespaces.contract.Contract`) before the batch that holds it is
staged: a record that is not what an export writes refuses the whole import, so no label,
property or value of a forged file ever reaches the database. An import that fails removes
what it staged; one that is killed leaves its staging namespace behind, invisible, and the
next import into the namespace (or dropping it) removes it, whatever labels its nodes carry.
"""

from __future__ import annotations

import uuid
from collections import ChainMap, Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from graphmem.core.forget.hashing import lock_texts
from graphmem.core.namespaces.contract import MAX_BATCH_BYTES, Contract, weight
from graphmem.core.namespaces.document import (
    ID_LABELS,
    INDEXED_LABELS,
    TEMPORAL_TYPES,
    VERSION,
    in_label_order,
    label_of,
    read_value,
    read_vector,
    remapped,
)
from graphmem.core.namespaces.drop import drop_batches, import_lock, sweep_stages
from graphmem.core.namespaces.export import Pages
from graphmem.core.namespaces.listing import counted, held, stage_name, stage_prefix, stage_target
from graphmem.core.namespaces.records import Header, erasure_check, read_header, record_kind
from graphmem.core.plans import Plan, Progress, Rows, Run, Transaction, VectorParam, Work
from graphmem.errors import (
    DatabaseError,
    ExportFormatError,
    ImportEmbedderMismatchError,
    NamespaceNotEmptyError,
    QueryMemoryError,
)
from graphmem.models.fields import native_time
from graphmem.models.namespaces import ImportResult
from graphmem.store.cypher import query

Numbered = list[tuple[int, Mapping[str, Any]]]


@dataclass
class Staging:
    """An import under way: where it stages, what it was given and what it wrote."""

    ns: str
    stage: str
    header: Header
    batch: int
    contract: Contract
    progress: Callable[[int], object] | None = None
    #: Each id of the export that another namespace held, and the new id it was given.
    ids: dict[str, str] = field(default_factory=dict)
    #: The element id of each staged node whose label has no key index, by its export key.
    eids: dict[str, str] = field(default_factory=dict)
    nodes: Counter[str] = field(default_factory=Counter)
    relationships: int = 0


def check_embedder(header: Header, model: str | None, dimension: int) -> None:
    """Refuse an export whose vectors another model made (they could not be compared)."""
    if header.dimension is None and header.model is None:
        return
    if header.dimension != dimension or (model is not None and header.model != model):
        raise ImportEmbedderMismatchError(
            graph_model=str(model),
            graph_dimension=dimension,
            export_model=str(header.model),
            export_dimension=int(header.dimension or 0),
        )


def refuse_if_held(ns: str, contents: Mapping[str, Any]) -> None:
    """Refuse an import into a namespace that holds anything (``ns_contents``' row)."""
    nodes = held(counted(contents["counts"]))
    if nodes:
        what = ", ".join(f"{n:,} {label}" for label, n in sorted(nodes.items()))
        raise NamespaceNotEmptyError(
            f"namespace {ns!r} is not empty ({what}): an import goes into an empty namespace "
            f"only. Drop it first (`graphmem namespaces drop {ns}`), or import into another "
            "namespace; nothing was written",
            ns=ns,
            counts=nodes,
        )


def first_record(records: Iterator[Any]) -> Header:
    first = next(records, None)
    if first is None:
        raise ExportFormatError("there are no records: an export has a header first", line=1)
    return read_header(first)


def run_import(
    staging: Staging, records: Iterator[Any], guard: Callable[[], Work[str | None]]
) -> Plan[ImportResult]:
    """Stages every record, then makes it visible in one transaction; what was staged is
    removed again if anything fails (a killed process leaves it for the next import)."""
    try:
        yield from _stage_all(staging, records)
        if staging.ids:
            yield from _fix_references(staging)
        at, key = yield from _made_visible(staging, guard)
    except GeneratorExit:
        raise
    except BaseException:
        # The first failure is the one to report; if the clean-up fails too, the next import
        # into the namespace (or dropping it) removes what was staged.
        with suppress(Exception):
            yield from drop_batches(staging.stage, lock=staging.ns, batch=staging.batch)
            yield from sweep_stages(staging.ns, batch=staging.batch, stage=staging.stage)
        raise
    tombstones = staging.nodes.get("Tombstone", 0)
    check = staging.header.erasure_check
    return ImportResult(
        ns=staging.ns,
        source_ns=staging.header.ns,
        format_version=VERSION,
        exported_at=staging.header.exported_at,
        nodes=in_label_order(staging.nodes),
        relationships=staging.relationships,
        remapped=staging.ids,
        tombstones_match=(check is not None and check == erasure_check(key, staging.ns))
        if tombstones
        else None,
        at=native_time(at),
    )


def remove_stale(ns: str, batch: int) -> Plan[int]:
    """Removes what imports into ``ns`` that never finished staged; returns how many nodes."""
    rows: Rows = yield Transaction(
        "read", lambda: _single(Run(query("import_stages"), {"prefix": stage_prefix(ns)}))
    )
    removed = 0
    for row in rows:
        if stage_target(row["stage"]) == ns:
            deleted, _ = yield from drop_batches(row["stage"], lock=ns, batch=batch)
            removed += sum(deleted.values())
    # What the labelled queries cannot see: nodes staged with labels that are not graphmem's.
    removed += yield from sweep_stages(ns, batch=batch)
    return removed


def new_staging(ns: str, header: Header, batch: int, dimension: int, progress: Any) -> Staging:
    contract = Contract(header.ns, dimension)
    return Staging(ns, stage_name(ns, uuid.uuid4().hex), header, batch, contract, progress)


def _single(run: Run) -> Work[Rows]:
    return (yield run)


def _stage_all(staging: Staging, records: Iterator[Any]) -> Plan[None]:
    """Stages the nodes and the relationships batch by batch, then checks the end record."""
    nodes: Numbered = []
    edges: Numbered = []
    line = 1
    held = 0  # about how many bytes the nodes of the batch hold
    for line, record in enumerate(records, start=2):
        kind = record_kind(record, line)
        if kind == "node":
            if edges or staging.relationships:
                raise ExportFormatError("a node record after the relationships", line=line)
            staging.contract.node(record, line)
            nodes.append((line, record))
            held += weight(record["properties"])
            if len(nodes) >= staging.batch or held >= MAX_BATCH_BYTES:
                yield from _stage_nodes(staging, nodes)
                nodes, held = [], 0
        elif kind == "relationship":
            staging.contract.edge(record, line)
            if nodes:
                yield from _stage_nodes(staging, nodes)
                nodes, held = [], 0
            edges.append((line, record))
            if len(edges) >= staging.batch:
                yield from _stage_edges(staging, edges)
                edges = []
        else:
            if nodes:
                yield from _stage_nodes(staging, nodes)
            if edges:
                yield from _stage_edges(staging, edges)
            if next(records, None) is not None:
                raise ExportFormatError("records after the end record", line=line + 1)
            _check_end(staging, record, line)
            return
    raise ExportFormatError(
        "the records end before the export's end record: the export was cut short",
        line=line + 1,
    )


def _check_end(staging: Staging, end: Mapping[str, Any], line: int) -> None:
    announced = {label: n for label, n in end["nodes"].items() if n}
    if announced != dict(staging.nodes) or end["relationships"] != staging.relationships:
        raise ExportFormatError(
            f"the end record announces {announced} nodes and {end['relationships']} "
            f"relationships, but the export held {dict(staging.nodes)} and "
            f"{staging.relationships}: records are missing",
            line=line,
        )


@contextmanager
def _at(line: int) -> Iterator[None]:
    """Names the record a value of which is refused."""
    try:
        yield
    except ExportFormatError as exc:
        if exc.line is not None:
            raise
        raise ExportFormatError(str(exc), line=line) from None


def _values(
    record: Mapping[str, Any],
    line: int,
    ids: Mapping[str, str] | None,
    ns: tuple[str, str] | None,
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """A record's properties as an import writes them: plain ones (ids remapped, a property
    ``ns`` of the export's namespace moved to ``ns[1]``), typed ones for Cypher to read, and
    vectors."""
    plain: dict[str, Any] = {}
    typed: list[dict[str, Any]] = []
    vectors: list[dict[str, Any]] = []
    types = record.get("types") or {}
    properties = record.get("properties") or {}
    with _at(line):
        if set(types) - set(properties):
            raise ExportFormatError(f"types names {sorted(set(types) - set(properties))}")
        for key, value in properties.items():
            kind = types.get(key)
            if kind in TEMPORAL_TYPES:
                text_or_list = isinstance(value, str) or (
                    isinstance(value, list) and all(isinstance(v, str) for v in value)
                )
                if not text_or_list or kind.startswith("list<") != isinstance(value, list):
                    raise ExportFormatError(f"property {key!r} is not a valid {kind}")
                typed.append({"key": key, "type": kind, "value": value})
            elif kind == "vector":
                vectors.append({"key": key, "values": VectorParam(read_vector(key, value))})
            else:
                plain[key] = remapped(key, read_value(key, value, kind), ids)
        if ns is not None and plain.get("ns") == ns[0]:
            plain["ns"] = ns[1]
    return plain, typed, vectors


def _label(record: Mapping[str, Any]) -> str:
    return label_of(list(record["labels"]))


def _stage_nodes(staging: Staging, batch: Numbered) -> Plan[None]:
    keys = [record["key"] for _, record in batch]
    if len(set(keys)) < len(keys):
        raise ExportFormatError(
            "the export names a node twice", line=_second(keys, [n for n, _ in batch])
        )
    ids = [record["key"] for _, record in batch if _label(record) in ID_LABELS]
    loose = {record["key"] for _, record in batch if _label(record) not in INDEXED_LABELS}

    def work() -> Work[tuple[dict[str, str], Rows]]:
        staged = [staging.ids.get(i, i) for i in ids]
        params = {"stage": staging.stage, "ids": ids, "staged": staged}
        (found,) = yield Run(query("import_taken"), params)
        if found["duplicates"]:
            raise ExportFormatError(f"the export names node {found['duplicates'][0]!r} twice")
        fresh = {i: str(uuid.uuid4()) for i in found["taken"] if i not in staging.ids}
        mapping = ChainMap(fresh, staging.ids) if fresh or staging.ids else None
        rows = []
        for line, record in batch:
            plain, typed, vectors = _values(record, line, mapping, None)
            plain["ns"] = staging.stage
            rows.append(
                {
                    "key": record["key"],
                    "labels": list(record["labels"]),
                    "properties": plain,
                    "typed": typed,
                    "vectors": vectors,
                }
            )
        return fresh, (yield Run(query("import_nodes"), {"rows": rows}))

    fresh, created = yield Transaction("write", work)
    staging.ids.update(fresh)
    staging.eids.update({row["key"]: row["eid"] for row in created if row["key"] in loose})
    staging.nodes.update(_label(record) for _, record in batch)
    if staging.progress is not None:
        yield Progress(staging.progress, len(batch))


def _second(keys: list[str], lines: list[int]) -> int:
    seen: set[str] = set()
    for key, line in zip(keys, lines, strict=True):
        if key in seen:
            return line
        seen.add(key)
    return lines[-1]


def _end_of(staging: Staging, side: Mapping[str, Any], line: int) -> dict[str, Any]:
    """One end of a relationship record as ``staged_node`` finds it."""
    label, key = label_of(list(side["labels"])), side["key"]
    if label in INDEXED_LABELS:
        return {"label": label, "key": staging.ids.get(key, key), "eid": None}
    eid = staging.eids.get(key)
    if eid is None:
        raise ExportFormatError(f"the relationship names {key!r}, no node of the export", line=line)
    return {"label": label, "key": key, "eid": eid}


def _stage_edges(staging: Staging, batch: Numbered) -> Plan[None]:
    rows = []
    for line, record in batch:
        plain, typed, vectors = _values(
            record, line, staging.ids or None, (staging.header.ns, staging.stage)
        )
        if vectors:
            raise ExportFormatError("a relationship cannot hold a vector", line=line)
        rows.append(
            {
                "type": record["type"],
                "start": _end_of(staging, record["start"], line),
                "end": _end_of(staging, record["end"], line),
                "properties": plain,
                "typed": typed,
            }
        )
    params = {"stage": staging.stage, "rows": rows}
    (done,) = yield Transaction("write", lambda: _single(Run(query("import_edges"), params)))
    if done["created"] != len(rows):
        raise ExportFormatError(
            f"records {batch[0][0]} to {batch[-1][0]}: a relationship names a node the export "
            "does not hold"
        )
    staging.relationships += len(rows)
    if staging.progress is not None:
        yield Progress(staging.progress, len(batch))


def _fix_references(staging: Staging) -> Plan[None]:
    """Gives the references that staged nodes made to ids remapped after them their new ids."""
    pages = Pages(staging.stage, staging.batch, content=True, vectors=False, edges=False)
    while (plan := pages.page()) is not None:
        rows: Rows = yield from plan
        updates = []
        for row in rows:
            changes = {
                key: new
                for key, value in row["properties"]
                if value is not None and (new := remapped(key, value, staging.ids)) != value
            }
            if changes:
                updates.append({"eid": row["eid"], "changes": changes})
        if updates:
            run = Run(query("import_fixup"), {"stage": staging.stage, "rows": updates})
            yield Transaction("write", partial(_single, run))


def _made_visible(
    staging: Staging, guard: Callable[[], Work[str | None]]
) -> Plan[tuple[Any, str | None]]:
    """The last transaction (:func:`_flip`), with what to do when it needs more memory than
    the server lets one transaction have."""
    try:
        done: tuple[Any, str | None] = yield Transaction("write", lambda: _flip(staging, guard))
    except QueryMemoryError as exc:
        nodes = sum(staging.nodes.values())
        raise QueryMemoryError(
            f"making the {nodes:,} staged nodes visible in one transaction needs more memory "
            "than this server lets one transaction use (each node moved updates the "
            "namespace's indexes: some 5 to 10 KiB a fact). Raise db.memory.transaction.max "
            "(on the local server GRAPHMEM_LOCAL_NEO4J_TRANSACTION_MEMORY, with "
            "GRAPHMEM_LOCAL_NEO4J_HEAP) and import again; nothing became visible, and what was "
            "staged is removed"
        ) from exc
    return done


def _flip(staging: Staging, guard: Callable[[], Work[str | None]]) -> Work[tuple[Any, str | None]]:
    """The import's last transaction: the embedder checked again, the namespace's writers
    locked out, the namespace found still empty, and everything staged moved into it, checked
    against what was staged before it commits."""
    key = yield from guard()
    ns = staging.ns
    yield import_lock(ns)
    yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
    yield from lock_texts(ns, None)
    (contents,) = yield Run(query("ns_contents"), {"ns": ns})
    refuse_if_held(ns, contents)
    (moved,) = yield Run(query("import_flip"), {"stage": staging.stage, "ns": ns})
    nodes: Counter[str] = Counter()
    for labels, count in moved["nodes"]:
        nodes[label_of(labels)] += count
    if nodes != staging.nodes or moved["relationships"] != staging.relationships:
        raise DatabaseError(
            f"what the import staged changed before it could be made visible (staged "
            f"{dict(staging.nodes)} and {staging.relationships} relationships, found "
            f"{dict(nodes)} and {moved['relationships']}): another import into namespace "
            f"{ns!r}, or a drop of it, ran meanwhile. Nothing became visible; import again"
        )
    return contents["now"], key
