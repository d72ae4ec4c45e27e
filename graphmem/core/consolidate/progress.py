"""What a consolidation run keeps track of: the gate it read, the new facts and which are
handled, the watermark they allow, and the cluster records not written yet."""

from __future__ import annotations

import copy
import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.forget.scrub import scrubbed
from graphmem.core.plans import Run, Work
from graphmem.errors import ConsolidationBusyError
from graphmem.models import native_time
from graphmem.models.consolidation import (
    AppliedOperation,
    Cluster,
    LLMUsage,
    Proposal,
    RejectedOperation,
    ReviewCandidate,
)
from graphmem.store.cypher import query


class Gate:
    """What the gate read: the lock, the watermark, the last run's end, the new facts."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.lock_run: str | None = row["lock_run"]
        self.lock_expires_at = row["lock_expires_at"]
        self.watermark = row["watermark"]
        self.last_finished_at = row["last_finished_at"]
        self.now = row["now"]
        #: Believed facts after the watermark not handled yet (counted up to the minimum).
        self.new_facts: int = row.get("new_facts", 0)
        #: Facts recorded after the watermark that a run handled already (the watermark
        #: trails the newest facts by ``settle`` seconds).
        self.recent: list[str] = list(row["recent"] or [])
        #: A new fact's id once per run whose proposal for its cluster was unusable.
        self.failures: list[str] = list(row["failures"] or [])
        #: Why a run may not start now (None: it may), once the transaction has decided.
        self.refused: str | None = None

    def refusal(self, config: ConsolidationConfig, force: bool) -> str | None:
        """Why a run may not start now (None: it may), after the lock (checked first)."""
        if force:
            return None
        if self.last_finished_at is not None:
            due = native_time(self.last_finished_at) + timedelta(seconds=config.min_interval)
            if native_time(self.now) < due:
                return (
                    f"the last run finished at {native_time(self.last_finished_at).isoformat()}; "
                    f"the next may start after {due.isoformat()} (min interval "
                    f"{config.min_interval:g} s; force=True to run now)"
                )
        if self.new_facts < config.min_new_facts:
            return (
                f"{self.new_facts} new fact(s) since the last run, fewer than "
                f"{config.min_new_facts} (force=True to run now)"
            )
        return None

    def given_up(self, config: ConsolidationConfig) -> set[str]:
        """The new facts whose cluster's proposal was unusable ``max_tries`` times."""
        tries = Counter(self.failures)
        return {f for f, n in tries.items() if n >= config.max_tries}

    def skip(self, config: ConsolidationConfig) -> set[str]:
        """The facts after the watermark that a run must not read: handled, or given up."""
        return set(self.recent) | self.given_up(config)

    def busy(self) -> bool:
        return self.lock_run is not None and (
            self.lock_expires_at is None
            or native_time(self.lock_expires_at) > native_time(self.now)
        )


def advance(new: Sequence[tuple[str, Any]], handled: set[str]) -> Any:
    """The watermark after ``handled``: the latest recording time up to which every new fact
    (``new``: id and recorded_at, oldest first) is handled; None when the first is not."""
    mark = None
    i = 0
    while i < len(new):
        at = new[i][1]
        j = i
        while j < len(new) and new[j][1] == at:
            j += 1
        if not all(fact_id in handled for fact_id, _ in new[i:j]):
            break
        mark, i = at, j
    return mark


class Records:
    """The records of clusters not written yet, as consolidate_record takes them."""

    def __init__(self) -> None:
        self.clusters: list[int] = []
        self.plans: list[str] = []
        self.applied: list[str] = []
        self.rejected: list[str] = []
        self.review: list[str] = []
        #: Every fact the clusters showed: forget scrubs a record that showed an erased one.
        self.facts: list[str] = []
        self.usage = LLMUsage()
        self.handled = 0
        self.failed = 0
        #: Only tier moves, which hold no text: nothing to scrub.
        self.textless = False

    def __bool__(self) -> bool:
        return bool(self.plans)

    def copy(self) -> Records:
        return copy.deepcopy(self)

    def add(
        self,
        cluster: Cluster,
        proposal: Proposal,
        applied: Sequence[AppliedOperation],
        rejected: Sequence[RejectedOperation],
        handled: bool,
    ) -> None:
        usage = proposal.usage.model_dump()
        index = cluster.index
        self.clusters.append(index)
        self.facts += [f.id for f in cluster.facts if f.id not in self.facts]
        self.plans.append(json.dumps({"cluster": index, "raw": proposal.raw, "usage": usage}))
        self.applied += [a.model_dump_json() for a in applied]
        self.rejected += [r.model_dump_json() for r in rejected]
        self.review += [r.model_dump_json() for r in proposal.review]
        self.usage = self.usage + proposal.usage
        self.handled += handled
        self.failed += not handled

    def moved(self, moves: Sequence[AppliedOperation]) -> None:
        """Records the tier pass's moves (cluster 0: they belong to no cluster). A move holds
        no text, so there is nothing for forget to scrub in it (see :meth:`params`)."""
        self.clusters.append(0)
        self.plans.append(json.dumps({"cluster": 0, "raw": "", "usage": {}, "pass": "tiers"}))
        self.applied += [json.dumps(m.__dict__) for m in moves]
        self.textless = True

    def refuse(self, rejected: RejectedOperation) -> None:
        """Records a rejection that belongs to no cluster."""
        if not self.clusters:
            self.clusters.append(0)
            self.plans.append(json.dumps({"cluster": 0, "raw": "", "usage": {}}))
        self.rejected.append(rejected.model_dump_json())

    def record(self) -> dict[str, Any]:
        """These clusters' :ConsolidationRecord, as consolidate_record takes each record."""
        return {
            "clusters": self.clusters,
            "plans": self.plans,
            "applied": self.applied,
            "rejected": self.rejected,
            "review": self.review,
            "facts": self.facts,
            "scrubbed": scrubbed(
                {
                    "plans": self.plans,
                    "applied": self.applied,
                    "rejected": self.rejected,
                    "review": self.review,
                }
            )
            if not self.textless
            else {"plans": self.plans, "applied": self.applied, "rejected": [], "review": []},
        }

    def params(self, ns: str, run_id: str, watermark: Any) -> dict[str, Any]:
        return record_params(ns, run_id, [self], watermark)


def record_params(
    ns: str, run_id: str, records: Sequence[Records], watermark: Any
) -> dict[str, Any]:
    """consolidate_record's parameters for ``records``, written in this order by one
    statement, and the namespace's watermark after them."""
    usage = LLMUsage()
    for r in records:
        usage = usage + r.usage
    return {
        "ns": ns,
        "run": run_id,
        "records": [r.record() for r in records],
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "handled": sum(r.handled for r in records),
        "failed": sum(r.failed for r in records),
        "watermark": watermark,
    }


class Outcome:
    """What a run has done so far."""

    def done(
        self,
        applied: Sequence[AppliedOperation],
        rejected: Sequence[RejectedOperation],
        handled: bool,
        new_here: set[str],
    ) -> None:
        self.applied += applied
        self.rejected += rejected
        if handled:
            self.handled |= new_here
        else:
            self.failed += 1
            self.failed_ids |= new_here

    def watermark_for(self, also: set[str]) -> Any:
        """The watermark once ``also`` is handled too: past every new fact handled in
        recording order, up to ``cap`` at most (a group the limit may have cut never counts
        as handled), as the database gave the time; None: it does not move."""
        handled = (self.handled | also) - self.blocked
        settled = [(f, at) for f, at in self.new if self.cap is None or at <= self.cap]
        mark = advance(settled, handled)
        return None if mark is None else self.originals.get(mark, mark)

    def __init__(self) -> None:
        self.pending = Records()
        self.originals: dict[Any, Any] = {}
        self.blocked: set[str] = set()
        self.given_up: set[str] = set()
        self.failed_ids: set[str] = set()
        self.cap: Any = None
        self.beat = time.monotonic()
        self.new: list[tuple[str, Any]] = []
        self.handled: set[str] = set()
        self.clusters = 0
        self.failed = 0
        self.proposed = 0
        self.applied: list[AppliedOperation] = []
        self.rejected: list[RejectedOperation] = []
        self.review: list[ReviewCandidate] = []
        self.usage = LLMUsage()
        self.timings: dict[str, float] = {}
        self.watermark: Any = None


def heartbeat(ns: str, run_id: str, lock_ttl: float) -> Work[None]:
    """Renews run ``run_id``'s lock on the namespace for ``lock_ttl`` seconds, or stops the
    run if it lost it."""
    (beat,) = yield Run(
        query("consolidate_heartbeat"), {"ns": ns, "run": run_id, "ttl_ms": int(lock_ttl * 1000)}
    )
    if not beat["held"]:
        raise ConsolidationBusyError(
            f"run {run_id} lost the consolidation lock of namespace {ns!r} (it expired "
            "and another run took it); it stopped before its next cluster",
            run_id=run_id,
        )
