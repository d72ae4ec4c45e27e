"""A namespace export, page by page: the header, every node of the namespace, the
relationships between them, and an end record with the counts.

Each page is one read transaction of at most ``page_size`` nodes, found by keyset (the first
key at or after the last page's, in key order; an index gives the order for facts, episodes
and tombstones), so that an export of a million facts never holds more than one page. The
export is page-consistent: each page is a consistent read of its own, and writes that land
between two pages may show in one and not the other. The end record says whether the
namespace's counts or its last write changed while it was read (``changed_during_export``):
export a namespace no one writes to for an exact copy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmem._version import __version__
from graphmem.core.namespaces.document import label_of
from graphmem.core.namespaces.records import (
    edge_records,
    end_record,
    erasure_check,
    header_record,
    node_record,
)
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work
from graphmem.errors import ExportFormatError
from graphmem.store.cypher import query
from graphmem.store.schema import SCHEMA_KEY

Records = list[dict[str, Any]]


@dataclass(frozen=True)
class Section:
    """One kind of node an export pages through, with the query that pages it."""

    label: str
    query: str


#: The nodes of a namespace, in the order an export writes them: the facts and episodes, the
#: tombstones, then the consolidation nodes (which name facts and runs written before them).
SECTIONS = (
    Section("Fact", "export_facts"),
    Section("Episode", "export_episodes"),
    Section("Tombstone", "export_fact_tombstones"),
    Section("Tombstone", "export_episode_tombstones"),
    Section("ConsolidationRun", "export_runs"),
    Section("ConsolidationState", "export_states"),
    Section("ConsolidationRecord", "export_records"),
    Section("ConsolidationChange", "export_changes"),
)


class Pages:
    """Keyset paging through the sections of one namespace: :meth:`page` is the plan of the
    next page's rows, None once every section is read. ``content`` and ``vectors`` ask for the
    nodes' properties (and embeddings), ``edges`` for their relationships."""

    def __init__(
        self, ns: str, page_size: int, *, content: bool, vectors: bool, edges: bool
    ) -> None:
        self.ns, self.page_size = ns, page_size
        self.flags = {"content": content, "vectors": vectors, "edges": edges}
        self.section = 0
        self.last: str | None = None

    def page(self) -> Plan[Rows] | None:
        if self.section >= len(SECTIONS):
            return None
        return self._page(SECTIONS[self.section])

    def _page(self, section: Section) -> Plan[Rows]:
        # A page starts at the last key read (at or after it, so that two nodes of one key are
        # seen and refused rather than one skipped) and reads one more row for it.
        after, extra = ("", 0) if self.last is None else (self.last, 1)
        params = {"ns": self.ns, "after": after, "page": self.page_size + extra, **self.flags}
        run = Run(query(section.query), params, plain_rows=True)
        rows: Rows = yield Transaction("read", lambda: _single(run))
        fresh = rows[1:] if self.last is not None and rows and rows[0]["key"] == self.last else rows
        keys = [row["key"] for row in fresh]
        if self.last in keys or len(set(keys)) < len(keys):
            raise ExportFormatError(
                f"two {section.label} nodes of namespace {self.ns!r} share the key "
                f"{_repeated(keys, self.last)!r}: the export cannot tell them apart"
            )
        if len(rows) < self.page_size + extra:
            self.section, self.last = self.section + 1, None
        else:
            self.last = keys[-1]
        return fresh


def _repeated(keys: list[str], last: str | None) -> str | None:
    seen = {last}
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None


def _single(run: Run) -> Work[Rows]:
    return (yield run)


class NamespaceExport:
    """The records of one export, a page at a time: :meth:`next_page` is the plan of the next
    page's records, None once the end record was given."""

    def __init__(
        self,
        ns: str,
        page_size: int,
        *,
        guard: Callable[[], Work[str | None]],
        embedder: tuple[str | None, int],
    ) -> None:
        #: ``guard`` refuses, in the header's transaction, a graph another embedder's vectors
        #: fill or that a re-embedding mixes; ``embedder`` is the client's (model, dimension).
        self.ns, self.guard, self.embedder = ns, guard, embedder
        self.stage = "header"
        self.nodes = Pages(ns, page_size, content=True, vectors=True, edges=False)
        self.edges = Pages(ns, page_size, content=False, vectors=False, edges=True)
        self.counts: Counter[str] = Counter()
        self.relationships = 0
        self.started: dict[str, Any] = {}

    def next_page(self) -> Plan[Records] | None:
        if self.stage == "header":
            return self._header()
        if self.stage == "nodes":
            plan = self.nodes.page()
            if plan is not None:
                return self._node_page(plan)
            self.stage = "edges"
        if self.stage == "edges":
            plan = self.edges.page()
            if plan is not None:
                return self._edge_page(plan)
            self.stage = "end"
        if self.stage == "end":
            return self._end()
        return None

    def _header(self) -> Plan[Records]:
        def work() -> Work[tuple[dict[str, Any], dict[str, Any] | None]]:
            yield from self.guard()
            state = yield Run(query("schema_state"), {"key": SCHEMA_KEY})
            contents = yield Run(query("ns_contents"), {"ns": self.ns})
            return contents[0], (state[0] if state else None)

        contents, state = yield Transaction("read", work)
        self.started = _stamp(contents)
        graph = state or {}
        record = header_record(
            self.ns,
            version=__version__,
            model=graph.get("embedder_model") or self.embedder[0],
            dimension=graph.get("embedding_dimension") or self.embedder[1],
            exported_at=str(_iso(contents["now"])),
            erasure=erasure_check(graph.get("erasure_key"), self.ns),
        )
        self.stage = "nodes"
        return [record]

    def _node_page(self, plan: Plan[Rows]) -> Plan[Records]:
        rows = yield from plan
        records = [node_record(row) for row in rows]
        self.counts.update(label_of(record["labels"]) for record in records)
        return records

    def _edge_page(self, plan: Plan[Rows]) -> Plan[Records]:
        rows = yield from plan
        records = [record for row in rows for record in edge_records(row)]
        self.relationships += len(records)
        return records

    def _end(self) -> Plan[Records]:
        rows: Rows = yield Transaction(
            "read", lambda: _single(Run(query("ns_contents"), {"ns": self.ns}))
        )
        self.stage = "done"
        changed = _stamp(rows[0]) != self.started
        return [
            end_record(
                self.counts,
                self.relationships,
                changed=changed,
                finished_at=str(_iso(rows[0]["now"])),
            )
        ]


def _stamp(contents: dict[str, Any]) -> dict[str, Any]:
    """What tells whether a namespace changed: its counts and its last write."""
    return {"counts": sorted(map(tuple, contents["counts"])), "last": _iso(contents["last_write"])}


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    native = value.to_native() if hasattr(value, "to_native") else value
    return str(native.isoformat())
