"""Writing a consolidation run's clusters: several clusters in one write transaction while the
proposer answers quickly, each cluster as it would be written in a transaction of its own.

A cluster with changes opens a batch; the clusters after it join the batch (each in its
order) until a proposal took long (an LLM's: its cluster is written at once, so that a slow
run loses no finished cluster when it dies), the batch waited :data:`WINDOW` seconds or grew
to :data:`MAX_CLUSTERS` clusters with changes or :data:`MAX_FACTS` facts, or the run ends.
The batch's transaction does what one transaction per cluster did, cluster after cluster: the
lock renewed, the facts locked and read again, each plan validated again against what its
facts are now, each changed fact's state kept (:ConsolidationChange), the operations applied
with the run's id as their actor, the clusters' records (the same records, in the same order)
written and the watermark moved past what they handle. Clusters whose facts share no
neighbour (see consolidate_neighbours) are rewritten by the same statements, which then do
what they would have done one cluster after another; the others wait for the next
statements. A process killed between two transactions still leaves whole clusters behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphmem.core.consolidate.progress import Outcome, Records, record_params
from graphmem.core.consolidate.rewrite import REWRITTEN, rewrite_runs
from graphmem.core.consolidate.validate import validate_plan
from graphmem.core.plans import Rows, Run, Work
from graphmem.models.consolidation import (
    AppliedOperation,
    Cluster,
    ClusterEdge,
    Proposal,
    ProposedOperation,
    RejectedOperation,
)
from graphmem.store.cypher import query

#: A proposal answered within this many seconds lets the next cluster join the batch.
QUICK = 0.05
#: Seconds a batch waits at most for more clusters after its first.
WINDOW = 0.5
#: The most clusters with changes, and facts in them, one batch writes.
MAX_CLUSTERS = 500
MAX_FACTS = 5_000

Checked = tuple[list[AppliedOperation], list[RejectedOperation]]


@dataclass
class Entry:
    """One cluster of a batch: its proposal, validated before the batch's transaction."""

    cluster: Cluster
    proposal: Proposal
    ops: list[ProposedOperation]
    #: Malformed or unusable (before validation).
    rejected: list[RejectedOperation]
    #: The first validation's outcome; a cluster with changes is validated again when written.
    accepted: list[AppliedOperation]
    refused: list[RejectedOperation]
    members: list[str]
    handled: bool
    new_here: set[str]
    changes: bool


@dataclass
class Written:
    """What a batch's transaction did: each written cluster's operations as validated then,
    and the records of the clusters after the last one with changes (not written yet)."""

    checked: dict[int, Checked]
    pending: Records


@dataclass
class Batch:
    """The clusters waiting for one write transaction, in their order."""

    entries: list[Entry] = field(default_factory=list)
    opened: float = 0.0
    #: The watermark once the last cluster with changes is written.
    watermark: Any = None
    changed: int = 0
    facts: int = 0

    def __bool__(self) -> bool:
        return bool(self.entries)

    def clear(self) -> None:
        self.entries, self.watermark, self.changed, self.facts = [], None, 0, 0

    def add(self, entry: Entry) -> None:
        """Adds ``entry``; the first one with changes opens the batch."""
        if not self.entries:
            self.opened = time.monotonic()
        self.entries.append(entry)
        if entry.changes:
            self.changed += 1
            self.facts += len(entry.members)

    def due(self, proposing: float) -> bool:
        """Whether the batch is written now, after a proposal that took ``proposing`` s."""
        return (
            proposing >= QUICK
            or time.monotonic() - self.opened >= WINDOW
            or self.changed >= MAX_CLUSTERS
            or self.facts >= MAX_FACTS
        )

    def settle(self, outcome: Outcome) -> None:
        """Sets the watermark the batch moves to: the one the transaction of its last cluster
        with changes would have written (the clusters of a batch are written together or not
        at all)."""
        last = max(i for i, e in enumerate(self.entries) if e.changes)
        waiting = {f for e in self.entries[: last + 1] if e.handled for f in e.new_here}
        self.watermark = outcome.watermark_for(waiting)

    def work(
        self, ns: str, run_id: str, pending: Records, heartbeat: Callable[[], Work[None]]
    ) -> Work[Written]:
        """The batch's transaction (after :meth:`settle`): ``pending`` holds the records not
        written before it."""
        yield from heartbeat()
        changed = [e for e in self.entries if e.changes]
        ids = [m for e in changed for m in e.members]
        yield Run(query("fact_lock"), {"ns": ns, "ids": ids})
        fresh = yield Run(query("consolidate_facts"), {"ns": ns, "ids": ids}, plain_rows=True)
        now = {r["id"]: r for r in fresh}
        checked: dict[int, Checked] = {}
        changing: dict[int, list[AppliedOperation]] = {}
        for e in changed:
            rows = [now[m] for m in e.members if m in now]
            accepted, refused = validate_plan(refreshed(e.cluster, rows), e.ops, ns)
            checked[e.cluster.index] = (accepted, refused)
            ops = [a for a in accepted if a.op in REWRITTEN]
            if ops:
                changing[e.cluster.index] = ops
        if changing:
            yield from _rewrite(ns, run_id, changing)
        records: list[Records] = []
        record = pending.copy()
        for e in self.entries:
            if e.changes:
                accepted, refused = checked[e.cluster.index]
                record.add(e.cluster, e.proposal, accepted, e.rejected + refused, True)
                records.append(record)
                record = Records()
            else:
                record.add(e.cluster, e.proposal, e.accepted, e.rejected + e.refused, e.handled)
        yield Run(query("consolidate_record"), record_params(ns, run_id, records, self.watermark))
        return Written(checked, record)

    def written(self, outcome: Outcome, done: Written) -> list[int]:
        """Takes ``done`` into ``outcome`` after the transaction committed, cluster after
        cluster; returns the indexes of the clusters handled, in their order."""
        for e in self.entries:
            if e.changes:
                accepted, refused = done.checked[e.cluster.index]
                outcome.done(accepted, e.rejected + refused, True, e.new_here)
            else:
                outcome.done(e.accepted, e.rejected + e.refused, e.handled, e.new_here)
        outcome.pending = done.pending
        return [e.cluster.index for e in self.entries]


def _rewrite(ns: str, run_id: str, changing: dict[int, list[AppliedOperation]]) -> Work[None]:
    """Keeps the changed facts' states, applies the operations, and keeps their new states:
    the clusters in their order, those whose facts share no neighbour by the same statements."""
    involved = {index: sorted({f for a in ops for f in a.facts}) for index, ops in changing.items()}
    snapshot = [{"id": f, "cluster": index} for index, ids in involved.items() for f in ids]
    yield Run(query("consolidate_snapshot"), {"ns": ns, "run": run_id, "rows": snapshot})
    groups: list[list[int]] = [list(changing)]
    if len(changing) > 1:
        ids = [f for ids in involved.values() for f in ids]
        rows = yield Run(query("consolidate_neighbours"), {"ns": ns, "ids": ids})
        groups = independent(involved, {r["id"]: r["near"] for r in rows})
    for group in groups:
        yield from rewrite_runs(ns, run_id, [a for index in group for a in changing[index]])
    after = {"ns": ns, "run": run_id, "clusters": list(changing)}
    yield Run(query("consolidate_snapshot_after"), after)


def independent(
    involved: Mapping[int, Sequence[str]], near: Mapping[str, Sequence[str]]
) -> list[list[int]]:
    """The clusters (``involved``: each one's changed facts, in the clusters' order) in runs
    of consecutive clusters whose changed facts and their neighbours (``near``) are disjoint."""
    groups: list[list[int]] = []
    seen: set[str] = set()
    for index, ids in involved.items():
        reach = set(ids).union(*(near.get(f, ()) for f in ids))
        if not groups or reach & seen:
            groups.append([])
            seen = set()
        groups[-1].append(index)
        seen |= reach
    return groups


def refreshed(cluster: Cluster, rows: Rows) -> Cluster:
    """``cluster`` with its facts' statuses and edges as ``rows`` (consolidate_facts) read
    them now, numbered as the proposer saw them; a fact gone since counts as forgotten."""
    now = {r["id"]: r for r in rows}
    numbers = {f.id: f.number for f in cluster.facts}
    facts = []
    for f in cluster.facts:
        row = now.get(f.id)
        fact = row["fact"] if row else None
        status = fact["status"] if fact else "forgotten"
        gone = fact is None or bool(row and row["forgotten"])
        facts.append(f.model_copy(update={"status": status, "forgotten": gone}))
    edges = tuple(
        ClusterEdge(
            type=e["type"],
            source=numbers[e["source"]],
            target=numbers[e["target"]],
            open=bool(e["open"]),
        )
        for r in rows
        for e in r["edges"]
        if e["source"] in numbers and e["target"] in numbers
    )
    return cluster.model_copy(update={"facts": tuple(facts), "edges": edges})
