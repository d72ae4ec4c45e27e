"""consolidate and undo: the gate, the clusters, the proposals, validation and one write
transaction per cluster, recorded on a :ConsolidationRun; and the exact undo of a run.

A run: the gate (a lock in Neo4j with an expiry, a minimum interval and a minimum of new
facts, ``force`` passing the last two) → the believed facts recorded since the namespace's
watermark with their nearest believed neighbours, grouped into clusters of bounded size → a
:class:`Propose` step per cluster (the client's proposer answers) → validation → in one
transaction per cluster: the lock renewed, the facts locked and read again, the plan
validated again against what they are now, each changed fact's state kept
(:ConsolidationChange), the operations applied with the run's id as their actor, the outcome
recorded and the watermark moved past what is handled. A process killed between two
transactions leaves whole clusters behind it and none half-applied; its lock lapses and the
next run takes up what was left.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from graphmem.core.base import CoreBase
from graphmem.core.checks import checked_ids
from graphmem.core.consolidate.clusters import group, number
from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.consolidate.rewrite import REWRITTEN, rewrite_runs
from graphmem.core.consolidate.validate import parse_operations, validate_plan
from graphmem.core.plans import Plan, Propose, Rows, Run, Transaction, Work
from graphmem.errors import ConsolidationBusyError, NotFoundError, UndoRefusedError
from graphmem.models import native_time
from graphmem.models.consolidation import (
    AppliedOperation,
    Cluster,
    ClusterEdge,
    ConsolidationResult,
    ConsolidationRunRecord,
    LLMUsage,
    Proposal,
    ProposedOperation,
    RejectedOperation,
    ReviewCandidate,
    UndoResult,
)
from graphmem.store.cypher import query

#: The fact properties a run may change, in the order :ConsolidationChange keeps them.
_STATE = (
    "status",
    "retired_at",
    "valid_to",
    "stated_valid_to",
    "superseded_by",
    "pinned",
    "retraction_reason",
    "retracted_by",
)


class _Gate:
    """What the gate read: the lock, the watermark, the last run's end, the new facts."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.lock_run: str | None = row["lock_run"]
        self.lock_expires_at = row["lock_expires_at"]
        self.watermark = row["watermark"]
        self.last_finished_at = row["last_finished_at"]
        self.now = row["now"]
        self.new_facts: int = row["new_facts"]

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


class ConsolidatePlans(CoreBase):
    consolidation: ConsolidationConfig = ConsolidationConfig()

    def consolidate(
        self,
        *,
        ns: str | None,
        force: bool = False,
        dry_run: bool = False,
        proposer: str,
        model: str | None,
    ) -> Plan[ConsolidationResult]:
        ns = self._ns(ns)
        config = self.consolidation
        run_id = str(uuid.uuid4())
        started = time.perf_counter()
        base: dict[str, Any] = {"ns": ns, "proposer": proposer, "model": model}

        def gate_work() -> Work[_Gate]:
            name = "consolidate_gate_read" if dry_run else "consolidate_gate"
            (row,) = yield Run(query(name), {"ns": ns, "min_new": config.min_new_facts})
            gate = _Gate(row)
            if gate.busy():
                expires = native_time(gate.lock_expires_at) if gate.lock_expires_at else None
                raise ConsolidationBusyError(
                    f"consolidation run {gate.lock_run} holds namespace {ns!r} until "
                    f"{expires.isoformat() if expires else 'it ends'}; this run did not start",
                    run_id=gate.lock_run,
                    expires_at=expires,
                )
            if not dry_run and gate.refusal(config, force) is None:
                yield Run(
                    query("consolidate_claim"),
                    {
                        "ns": ns,
                        "run": run_id,
                        "ttl_ms": int(config.lock_ttl * 1000),
                        "proposer": proposer,
                        "model": model,
                    },
                )
            return gate

        gate: _Gate = yield Transaction("read" if dry_run else "write", gate_work)
        refusal = gate.refusal(config, force)
        if refusal is not None:
            return ConsolidationResult(
                run_id=None, status="skipped", reason=refusal, watermark=gate.watermark, **base
            )
        outcome = _Outcome()
        status, error, closed = "failed", None, False
        try:
            yield from self._run(ns, run_id, gate.watermark, dry_run, outcome)
            status = "partial" if outcome.failed else "finished"
        except GeneratorExit:
            closed = True  # abandoned by its driver: nothing more can be run
            raise
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            outcome.timings["total"] = round(time.perf_counter() - started, 4)
            if not dry_run and not closed:
                finish = {
                    "ns": ns,
                    "run": run_id,
                    "status": status,
                    "error": error,
                    "timings": json.dumps(outcome.timings),
                    "new_facts": len(outcome.new),
                    "clusters": outcome.clusters,
                    "watermark": advance(outcome.new, outcome.handled),
                }
                pending = outcome.pending

                def close() -> Work[Rows]:
                    if pending:  # the clusters with nothing to change since the last write
                        params = pending.params(ns, run_id, finish["watermark"])
                        yield Run(query("consolidate_record"), params)
                    return (yield Run(query("consolidate_finish"), finish))

                rows = yield Transaction("write", close)
                outcome.watermark = rows[0]["watermark"] if rows else None
        return ConsolidationResult(
            run_id=None if dry_run else run_id,
            status="dry_run" if dry_run else status,  # type: ignore[arg-type]
            new_facts=len(outcome.new),
            clusters=outcome.clusters,
            proposed=outcome.proposed,
            applied=tuple(outcome.applied),
            rejected=tuple(outcome.rejected),
            review=tuple(outcome.review),
            usage=outcome.usage,
            timings=outcome.timings,
            watermark=outcome.watermark if not dry_run else gate.watermark,
            **base,
        )

    def _run(
        self, ns: str, run_id: str, watermark: Any, dry_run: bool, outcome: _Outcome
    ) -> Plan[None]:
        config = self.consolidation
        clock = time.perf_counter()
        params = {
            "ns": ns,
            "after": watermark,
            "limit": config.max_new_facts,
            # Candidates the index ranks for each fact: the namespace's nearest are among them
            # unless other namespaces crowd that part of the index.
            "scan": max(config.neighbours * 2, 10),
            "k": config.neighbours,
            "floor": (1 + config.neighbour_similarity) / 2,  # the index's (1 + cos) / 2
        }
        found: Rows = yield Transaction("read", lambda: _single("consolidate_candidates", params))
        # Native times: the driver's own DateTime compares slowly, and the watermark is
        # compared with each new fact's time after every cluster.
        outcome.new = [(r["id"], native_time(r["recorded_at"])) for r in found]
        pairs: list[tuple[str, str, float]] = []
        for r in found:
            pairs += [(r["id"], n["id"], round(2 * n["score"] - 1, 4)) for n in r["near"]]
            pairs += [(r["id"], other, 1.0) for other in r["same"]]
            pairs += [(r["id"], other, 1.0) for other in r["contradicted"]]
        clusters = group([r["id"] for r in found], pairs, config.cluster_size)
        in_clusters = {f for members in clusters for f in members}
        # A new fact with no neighbour has nothing to weigh it against: handled as it is.
        outcome.handled = {r["id"] for r in found if r["id"] not in in_clusters}
        outcome.clusters = len(clusters)
        ids = sorted(in_clusters)
        facts: Rows = (
            (
                yield Transaction(
                    "read", lambda: _single("consolidate_facts", {"ns": ns, "ids": ids})
                )
            )
            if ids
            else []
        )
        rows = {r["id"]: {**r["fact"], "forgotten": r["forgotten"]} for r in facts if r["fact"]}
        edges = [e for r in facts for e in r["edges"]]
        new_ids = {r["id"] for r in found}
        outcome.timings["read"] = round(time.perf_counter() - clock, 4)
        outcome.timings["propose"] = outcome.timings["apply"] = 0.0
        for index, members in enumerate(clusters, start=1):
            members = [m for m in members if m in rows]
            cluster = number(index, rows, members, new_ids, edges, pairs)
            clock = time.perf_counter()
            proposal: Proposal = yield Propose(cluster)
            outcome.timings["propose"] += round(time.perf_counter() - clock, 4)
            outcome.usage = outcome.usage + proposal.usage
            outcome.review += proposal.review
            clock = time.perf_counter()
            yield from self._cluster(ns, run_id, cluster, proposal, members, dry_run, outcome)
            outcome.timings["apply"] += round(time.perf_counter() - clock, 4)

    def _cluster(
        self,
        ns: str,
        run_id: str,
        cluster: Cluster,
        proposal: Proposal,
        members: list[str],
        dry_run: bool,
        outcome: _Outcome,
    ) -> Plan[None]:
        """Validates one cluster's proposal and, when it changes something (outside a dry
        run), applies it in one transaction, validated again there against the facts as they
        are then. A cluster with nothing to change writes no transaction of its own: its
        record waits for the next one (or the run's end), which moves the watermark past it."""
        rejected: list[RejectedOperation] = []
        if proposal.operations is None:
            rejected.append(
                RejectedOperation(
                    rejection=f"the proposal was unusable: {proposal.error}",
                    cluster=cluster.index,
                )
            )
            ops: list[ProposedOperation] = []
        else:
            ops, malformed = parse_operations(proposal.operations, cluster.index)
            rejected += malformed
            outcome.proposed += len(proposal.operations)
        handled = proposal.operations is not None
        new_here = {f.id for f in cluster.facts if f.new}
        accepted, refused = validate_plan(cluster, ops, ns)
        if dry_run or not any(a.op in REWRITTEN for a in accepted):
            outcome.done(accepted, rejected + refused, handled, new_here)
            if not dry_run:
                outcome.pending.add(cluster.index, proposal, accepted, rejected + refused, handled)
            return
        config = self.consolidation
        watermark = advance(outcome.new, outcome.handled | new_here)

        def work() -> Work[tuple[list[AppliedOperation], list[RejectedOperation]]]:
            (beat,) = yield Run(
                query("consolidate_heartbeat"),
                {"ns": ns, "run": run_id, "ttl_ms": int(config.lock_ttl * 1000)},
            )
            if not beat["held"]:
                raise ConsolidationBusyError(
                    f"run {run_id} lost the consolidation lock of namespace {ns!r} (it "
                    "expired and another run took it); it stopped before this cluster",
                    run_id=run_id,
                )
            yield Run(query("fact_lock"), {"ns": ns, "ids": members})
            fresh = yield Run(query("consolidate_facts"), {"ns": ns, "ids": members})
            accepted, refused = validate_plan(_refreshed(cluster, fresh), ops, ns)
            changing = [a for a in accepted if a.op in REWRITTEN]
            if changing:
                involved = sorted({f for a in changing for f in a.facts})
                snap = {"ns": ns, "run": run_id, "cluster": cluster.index}
                yield Run(query("consolidate_snapshot"), {**snap, "ids": involved})
                yield from rewrite_runs(ns, run_id, changing)
                yield Run(query("consolidate_snapshot_after"), snap)
            record = outcome.pending.copy()
            record.add(cluster.index, proposal, accepted, rejected + refused, True)
            yield Run(query("consolidate_record"), record.params(ns, run_id, watermark))
            return accepted, rejected + refused

        accepted, refused = yield Transaction("write", work)
        outcome.pending = _Records()  # written with this cluster
        outcome.done(accepted, refused, handled, new_here)

    def consolidation_runs(
        self, *, ns: str | None, ids: Sequence[str] | None = None, limit: int = 20
    ) -> Plan[list[ConsolidationRunRecord]]:
        ns = self._ns(ns)
        checked = list(checked_ids("run id", ids)) if ids is not None else None
        params = {"ns": ns, "ids": checked, "limit": limit}
        rows: Rows = yield Transaction("read", lambda: _single("consolidate_runs", params))
        return [run_record(r["run"]) for r in rows]

    def undo(self, run_id: str, *, ns: str | None, actor: str = "api") -> Plan[UndoResult]:
        ns = self._ns(ns)
        (run_id,) = checked_ids("run id", [run_id])

        def work() -> Work[UndoResult]:
            found = yield Run(query("consolidate_undo_check"), {"ns": ns, "run": run_id})
            if not found:
                raise NotFoundError(
                    f"no consolidation run {run_id!r} in namespace {ns!r}", ids=(run_id,)
                )
            check = found[0]
            blockers = _blockers(run_id, check)
            if blockers:
                raise UndoRefusedError(
                    f"cannot undo run {run_id}: " + "; ".join(blockers), blockers=tuple(blockers)
                )
            (done,) = yield Run(
                query("consolidate_undo"), {"ns": ns, "run": run_id, "actor": actor}
            )
            return UndoResult(
                run_id=run_id,
                ns=ns,
                restored_facts=done["restored"],
                removed_edges=done["removed"],
                reopened=done["reopened"],
                undone_at=native_time(done["undone_at"]),
            )

        result: UndoResult = yield Transaction("write", work)
        return result


class _Records:
    """The records of clusters not written yet, as consolidate_record takes them."""

    def __init__(self) -> None:
        self.clusters: list[int] = []
        self.plans: list[str] = []
        self.applied: list[str] = []
        self.rejected: list[str] = []
        self.review: list[str] = []
        self.usage = LLMUsage()
        self.handled = 0
        self.failed = 0

    def __bool__(self) -> bool:
        return bool(self.plans)

    def copy(self) -> _Records:
        other = _Records()
        other.__dict__.update(
            {k: list(v) if isinstance(v, list) else v for k, v in self.__dict__.items()}
        )
        return other

    def add(
        self,
        index: int,
        proposal: Proposal,
        applied: Sequence[AppliedOperation],
        rejected: Sequence[RejectedOperation],
        handled: bool,
    ) -> None:
        usage = proposal.usage.model_dump()
        self.clusters.append(index)
        self.plans.append(json.dumps({"cluster": index, "raw": proposal.raw, "usage": usage}))
        self.applied += [a.model_dump_json() for a in applied]
        self.rejected += [r.model_dump_json() for r in rejected]
        self.review += [r.model_dump_json() for r in proposal.review]
        self.usage = self.usage + proposal.usage
        self.handled += handled
        self.failed += not handled

    def params(self, ns: str, run_id: str, watermark: Any) -> dict[str, Any]:
        return {
            "ns": ns,
            "run": run_id,
            "clusters": self.clusters,
            "plan": self.plans,
            "applied": self.applied,
            "rejected": self.rejected,
            "review": self.review,
            "calls": self.usage.calls,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "handled": self.handled,
            "failed": self.failed,
            "watermark": watermark,
        }


class _Outcome:
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

    def __init__(self) -> None:
        self.pending = _Records()
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


def _single(name: str, params: dict[str, Any]) -> Work[Rows]:
    return (yield Run(query(name), params))


def _refreshed(cluster: Cluster, rows: Rows) -> Cluster:
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


def _blockers(run_id: str, check: Mapping[str, Any]) -> list[str]:
    """Why run ``run_id`` cannot be undone (consolidate_undo_check's row), if anything."""
    if check["status"] == "undone":
        return ["it was undone already"]
    lock = check["lock_run"]
    if (
        lock is not None
        and lock != run_id
        and check["lock_expires_at"] is not None
        and (native_time(check["lock_expires_at"]) > native_time(check["now"]))
    ):
        return [f"consolidation run {lock} is under way; undo after it ends"]
    if check["status"] == "running" and lock == run_id:
        return ["it is still running"]
    blockers = [f"later run {other} changed facts it changed" for other in check["later"]]
    blockers += [
        f"contradiction {pair} it opened was resolved since" for pair in check["resolved_later"]
    ]
    for change in check["changes"]:
        if change["now"] is None:
            blockers.append(f"fact {change['fact_id']} was forgotten since")
        elif change["now"] != change["after"]:
            now = dict(zip(_STATE, change["now"], strict=True))
            blockers.append(
                f"fact {change['fact_id']} changed since (now {now['status']}"
                + (f", replaced by {now['superseded_by']}" if now["superseded_by"] else "")
                + ")"
            )
    return blockers


def run_record(row: Mapping[str, Any]) -> ConsolidationRunRecord:
    """A :ConsolidationRun node's properties as a record."""
    return ConsolidationRunRecord(
        id=row["id"],
        ns=row["ns"],
        status=row["status"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        proposer=row["proposer"],
        model=row["model"],
        plans=tuple(json.loads(p) for p in row["plans"] or ()),
        applied=tuple(AppliedOperation.model_validate_json(a) for a in row["applied"] or ()),
        rejected=tuple(RejectedOperation.model_validate_json(r) for r in row["rejected"] or ()),
        review=tuple(ReviewCandidate.model_validate_json(r) for r in row["review"] or ()),
        usage=LLMUsage(
            calls=row["llm_calls"] or 0,
            prompt_tokens=row["prompt_tokens"] or 0,
            completion_tokens=row["completion_tokens"] or 0,
        ),
        timings=json.loads(row["timings"]) if row["timings"] else {},
        error=row["error"],
        undone_at=row["undone_at"],
        undone_by=row["undone_by"],
    )
