"""Dropping a namespace: every node that carries it deleted with its relationships, batch by
batch, each batch one transaction (``ns_drop``), then its lock nodes.

Unlike ``forget --all``, which erases the content and keeps a tombstone of each erased node
for the audits (and refuses the same words coming back), a drop leaves nothing behind: the
namespace's tombstones, consolidation runs and records go too, so its audit trail is gone and
nothing stops the same texts from being stored again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from graphmem.core.namespaces.document import label_of
from graphmem.core.namespaces.listing import stage_prefix
from graphmem.core.plans import Plan, Progress, Rows, Run, Transaction, Work
from graphmem.store.cypher import query

#: The kinds of lock node a namespace has (:GraphmemLock, keyed ``<kind>:<namespace>...``):
#: ingest's, the text buckets' of remember and forget, the import's, and the requests' records
#: (:GraphmemRequest, see :mod:`graphmem.service.requests`).
LOCK_KINDS = ("ingest", "import", "text", "request")


def import_lock(ns: str) -> Run:
    """The write lock that an import's last step and every batch of a drop or of a staging
    clean-up of ``ns`` take first: none of them runs beside another."""
    return Run(query("ns_lock"), {"key": f"import:{ns}", "ns": ns})


def drop_batches(
    ns: str, *, lock: str, batch: int, progress: Callable[[int], object] | None = None
) -> Plan[tuple[Counter[str], int]]:
    """Deletes every node of namespace ``ns`` (a namespace, or the staging namespace of an
    import into ``lock``), ``batch`` at a time; returns the nodes deleted by label and the
    number of batches."""
    deleted: Counter[str] = Counter()
    batches = 0
    while True:
        rows: Rows = yield Transaction("write", lambda: _drop_one(ns, lock, batch))
        batches += 1
        count = 0
        for row in rows:
            deleted[label_of(row["labels"])] += row["deleted"]
            count += row["deleted"]
        if count and progress is not None:
            yield Progress(progress, count)
        if count < batch:
            return deleted, batches


def _drop_one(ns: str, lock: str, batch: int) -> Work[Rows]:
    yield import_lock(lock)
    return (yield Run(query("ns_drop"), {"ns": ns, "batch": batch}))


def sweep_stages(ns: str, *, batch: int, stage: str | None = None) -> Plan[int]:
    """Deletes, ``batch`` at a time, every node of the staging namespaces of imports into
    ``ns`` (only ``stage``'s when given) whatever labels it carries: nothing an unfinished
    import staged outlives the next import into ``ns``, or a drop of it, even a node whose
    labels are not graphmem's. Returns how many nodes it deleted."""
    prefix = stage_prefix(ns)
    pattern = re.escape(stage) if stage is not None else re.escape(prefix) + "[0-9a-f]{32}"
    params = {"prefix": prefix, "pattern": pattern, "batch": batch}
    removed = 0
    while True:
        rows: Rows = yield Transaction("write", lambda: _sweep_one(ns, params))
        deleted = int(rows[0]["deleted"])
        removed += deleted
        if deleted < batch:
            return removed


def _sweep_one(ns: str, params: dict[str, object]) -> Work[Rows]:
    yield import_lock(ns)
    return (yield Run(query("import_sweep"), params))
