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
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from graphmem.core.actor import current_actor
from graphmem.core.checks import checked_flag
from graphmem.core.consolidate.batch import Batch, Entry, Written
from graphmem.core.consolidate.clusters import Numbering, group
from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.consolidate.progress import Gate, Outcome, heartbeat
from graphmem.core.consolidate.rewrite import REWRITTEN
from graphmem.core.consolidate.summaries import SummaryPlans
from graphmem.core.consolidate.tiers import tier_pass
from graphmem.core.consolidate.undo import RunPlans
from graphmem.core.consolidate.validate import parse_operations, validate_plan
from graphmem.core.plans import Plan, Progress, Propose, Rows, Run, Transaction, Work, single
from graphmem.errors import ConsolidationBusyError, InvalidInputError
from graphmem.models import native_time
from graphmem.models.consolidation import (
    Cluster,
    ConsolidationResult,
    Proposal,
    ProposedOperation,
    RejectedOperation,
)
from graphmem.store.cypher import query


class ConsolidatePlans(RunPlans, SummaryPlans):
    def consolidate(
        self,
        *,
        ns: str | None,
        force: bool = False,
        dry_run: bool = False,
        proposer: str,
        model: str | None,
        progress: Callable[[int, int], object] | None = None,
        tiers: bool = False,
        summaries: bool | None = None,
    ) -> Plan[ConsolidationResult]:
        ns = self._ns(ns)
        force, dry_run = checked_flag("force", force), checked_flag("dry_run", dry_run)
        tiers = checked_flag("tiers", tiers)
        # The clients decide None (on when their proposer can summarise).
        summaries = False if summaries is None else checked_flag("summaries", summaries)
        if progress is not None and not callable(progress):
            raise InvalidInputError(
                "progress must be a callable taking the clusters done and the clusters in all"
            )
        config = self.consolidation
        run_id = str(uuid.uuid4())
        started = time.perf_counter()
        base: dict[str, Any] = {"ns": ns, "proposer": proposer, "model": model}
        gate: Gate = yield Transaction(
            "read" if dry_run else "write",
            lambda: self._gate(ns, run_id, force, dry_run, proposer, model),
        )
        if gate.refused is not None:
            return ConsolidationResult(
                run_id=None,
                status="skipped",
                reason=gate.refused,
                watermark=gate.watermark,
                **base,
            )
        outcome = _outcome(gate, config)
        status, error, closed = "failed", None, False
        try:
            yield from self._run(
                ns, run_id, gate.watermark, gate.skip(config), dry_run, outcome, progress
            )
            if summaries:
                yield from self._summaries(ns, run_id, dry_run, outcome)
            if tiers:
                yield from tier_pass(ns, run_id, self.importance, config.lock_ttl, dry_run, outcome)
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
                yield from _finish(ns, run_id, gate, outcome, status, error)
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

    def _gate(
        self, ns: str, run_id: str, force: bool, dry_run: bool, proposer: str, model: str | None
    ) -> Work[Gate]:
        """The namespace's consolidation state read, and, unless the gate refuses the run (or
        it is a dry run), its lock claimed for run ``run_id``; a lock another run holds stops
        this one."""
        config = self.consolidation
        if not dry_run:  # a real run takes the state's lock first
            yield Run(query("consolidate_gate"), {"ns": ns})
        (row,) = yield Run(query("consolidate_gate_read"), {"ns": ns})
        gate = Gate(row)
        pending = {
            "ns": ns,
            "after": gate.watermark,
            "skip": sorted(gate.skip(config)),
            "min_new": config.min_new_facts,
        }
        (count,) = yield Run(query("consolidate_pending"), pending)
        gate.new_facts = count["new_facts"]
        if gate.busy():
            expires = native_time(gate.lock_expires_at) if gate.lock_expires_at else None
            raise ConsolidationBusyError(
                f"consolidation run {gate.lock_run} holds namespace {ns!r} until "
                f"{expires.isoformat() if expires else 'it ends'}; this run did not start",
                run_id=gate.lock_run,
                expires_at=expires,
            )
        gate.refused = gate.refusal(config, force)
        if not dry_run and gate.refused is None:
            yield Run(
                query("consolidate_claim"),
                {
                    "ns": ns,
                    "run": run_id,
                    "ttl_ms": int(config.lock_ttl * 1000),
                    "proposer": proposer,
                    "model": model,
                    "actor": current_actor(),
                },
            )
        return gate

    def _run(
        self,
        ns: str,
        run_id: str,
        watermark: Any,
        skip: set[str],
        dry_run: bool,
        outcome: Outcome,
        progress: Callable[[int, int], object] | None = None,
    ) -> Plan[None]:
        config = self.consolidation
        clock = time.perf_counter()
        params = {
            "ns": ns,
            "after": watermark,
            "skip": sorted(skip),
            "limit": config.max_new_facts,
            # Candidates the index ranks for each fact: the namespace's nearest are among them
            # unless other namespaces crowd that part of the index.
            "scan": max(config.neighbours * 2, 10),
            "k": config.neighbours,
            "floor": (1 + config.neighbour_similarity) / 2,  # the index's (1 + cos) / 2
        }
        found: Rows = yield Transaction(
            "read", lambda: _candidates(params, filtered=self.filtered_search)
        )
        # Native times: the driver's own DateTime compares slowly, and the watermark is
        # compared with each new fact's time after every cluster.
        outcome.new = [(r["id"], native_time(r["recorded_at"])) for r in found]
        outcome.originals = {
            native: r["recorded_at"] for (_, native), r in zip(outcome.new, found, strict=True)
        }
        if len(found) == config.max_new_facts:
            # The limit may have cut a group of facts recorded together: the watermark stays
            # before the last group, whose other facts the next run reads.
            last = outcome.new[-1][1]
            outcome.blocked = {f for f, at in outcome.new if at == last}
        pairs: list[tuple[str, str, float]] = []
        for r in found:
            pairs += [(r["id"], n["id"], round(2 * n["score"] - 1, 4)) for n in r["near"]]
            pairs += [(r["id"], other, 1.0) for other in r["same"]]
            pairs += [(r["id"], other, 1.0) for other in r["contradicted"]]
        clusters = group([r["id"] for r in found], pairs, config.cluster_size)
        in_clusters = {f for members in clusters for f in members}
        waiting = in_clusters | {a for a, _, _ in pairs}
        # A new fact with no neighbour has nothing to weigh it against: handled as it is. One
        # whose pairs all overflowed full clusters waits for the next run.
        outcome.handled = {r["id"] for r in found if r["id"] not in waiting}
        outcome.clusters = len(clusters)
        ids = sorted(in_clusters)
        facts: Rows = []
        if ids:
            read = Run(query("consolidate_facts"), {"ns": ns, "ids": ids}, plain_rows=True)
            facts = yield Transaction("read", lambda: single(read))
        rows = {r["id"]: {**r["fact"], "forgotten": r["forgotten"]} for r in facts if r["fact"]}
        edges = [e for r in facts for e in r["edges"]]
        outcome.timings["read"] = round(time.perf_counter() - clock, 4)
        outcome.timings["propose"] = outcome.timings["apply"] = 0.0
        batch = Batch()
        numbering = Numbering(rows, {r["id"] for r in found}, edges, pairs)
        for index, members in enumerate(clusters, start=1):
            members = [m for m in members if m in rows]
            cluster = numbering.cluster(index, members)
            if not dry_run and time.monotonic() - outcome.beat > config.lock_ttl / 3:
                yield Transaction("write", lambda: self._heartbeat(ns, run_id))
                outcome.beat = time.monotonic()
            clock = time.perf_counter()
            proposal: Proposal = yield Propose(cluster)
            proposing = time.perf_counter() - clock
            outcome.timings["propose"] += round(proposing, 4)
            outcome.usage = outcome.usage + proposal.usage
            outcome.review += proposal.review
            clock = time.perf_counter()
            done = self._cluster(ns, cluster, proposal, members, dry_run, outcome, batch)
            if batch and (index == len(clusters) or batch.due(proposing)):
                done = yield from self._write(ns, run_id, batch, outcome)
            outcome.timings["apply"] += round(time.perf_counter() - clock, 4)
            if progress is not None:
                for finished in done:
                    yield Progress(_clusters_done(progress, finished, len(clusters)), 1)

    def _cluster(
        self,
        ns: str,
        cluster: Cluster,
        proposal: Proposal,
        members: list[str],
        dry_run: bool,
        outcome: Outcome,
        batch: Batch,
    ) -> list[int]:
        """Validates one cluster's proposal and, when it changes something (outside a dry
        run), adds it to ``batch`` (see :mod:`.batch`), to be validated again when written
        against the facts as they are then; so is every cluster after it until the batch is
        written. A cluster with nothing to change writes no transaction of its own: its
        record waits for the next one (or the run's end), which moves the watermark past it.
        Returns the clusters handled now (not added to a batch), by index."""
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
        changes = not dry_run and any(a.op in REWRITTEN for a in accepted)
        if not batch and not changes:
            outcome.done(accepted, rejected + refused, handled, new_here)
            if not dry_run:
                outcome.pending.add(cluster, proposal, accepted, rejected + refused, handled)
            return [cluster.index]
        entry = Entry(
            cluster, proposal, ops, rejected, accepted, refused, members, handled, new_here, changes
        )
        batch.add(entry)
        return []

    def _write(self, ns: str, run_id: str, batch: Batch, outcome: Outcome) -> Plan[list[int]]:
        """Writes ``batch`` in one transaction and empties it; returns its clusters' indexes."""
        pending = outcome.pending
        batch.settle(outcome)
        written: Written = yield Transaction(
            "write", lambda: batch.work(ns, run_id, pending, lambda: self._heartbeat(ns, run_id))
        )
        outcome.beat = time.monotonic()
        done = batch.written(outcome, written)
        batch.clear()
        return done

    def _heartbeat(self, ns: str, run_id: str) -> Work[None]:
        """Renews run ``run_id``'s lock on the namespace, or stops the run if it lost it."""
        yield from heartbeat(ns, run_id, self.consolidation.lock_ttl)


def _outcome(gate: Gate, config: ConsolidationConfig) -> Outcome:
    """A run's outcome as it starts, after ``gate``: the latest time its watermark may reach
    (``settle`` before the gate read the clock), and the new facts it gives up on, rejected."""
    outcome = Outcome()
    outcome.cap = native_time(gate.now) - timedelta(seconds=config.settle)
    outcome.given_up = gate.given_up(config)
    for fact_id in sorted(outcome.given_up):
        gave_up = RejectedOperation(
            facts=(fact_id,),
            rejection=f"given up: the proposals for this new fact's cluster were unusable "
            f"{config.max_tries} times; the fact is left as it is",
            cluster=0,
        )
        outcome.rejected.append(gave_up)
        outcome.pending.refuse(gave_up)
    return outcome


def _finish(
    ns: str, run_id: str, gate: Gate, outcome: Outcome, status: str, error: str | None
) -> Plan[None]:
    """Records run ``run_id``'s end (``status``, ``error``), the clusters not written yet and
    the namespace's new watermark, and releases its lock; the watermark it moved to goes to
    ``outcome``."""
    finish = {
        "ns": ns,
        "run": run_id,
        "status": status,
        "error": error,
        "timings": json.dumps(outcome.timings),
        "new_facts": len(outcome.new),
        "clusters": outcome.clusters,
        "watermark": outcome.watermark_for(set()),
        "recent": sorted(outcome.handled | set(gate.recent) | outcome.given_up),
        "failures": [f for f in gate.failures if f not in outcome.handled]
        + sorted(outcome.failed_ids),
    }
    pending = outcome.pending

    def close() -> Work[Rows]:
        if pending:  # the clusters with nothing to change since the last write
            params = pending.params(ns, run_id, finish["watermark"])
            yield Run(query("consolidate_record"), params)
        return (yield Run(query("consolidate_finish"), finish))

    rows = yield Transaction("write", close)
    outcome.watermark = rows[0]["watermark"] if rows else None


def _clusters_done(
    progress: Callable[[int, int], object], done: int, total: int
) -> Callable[[int], object]:
    """The report of a Progress step after cluster ``done`` of ``total``."""
    return lambda _count: progress(done, total)


def _candidates(params: dict[str, Any], *, filtered: bool) -> Work[Rows]:
    """The new facts and their neighbours. Where the index filters by namespace, the nearest
    are the namespace's own, and the search asks for no more than the namespace's believed
    facts (see search_counts)."""
    if not filtered:
        rows: Rows = yield Run(query("consolidate_candidates"), params, plain_rows=True)
        return rows
    counts = {"ns": params["ns"], "statuses": ["active"], "cap": params["scan"]}
    (held,) = yield Run(query("search_counts"), counts)
    if held["facts"] == 0:
        return []
    search = Run(
        query("consolidate_candidates_filtered"), {**params, "scan": held["facts"]}, plain_rows=True
    )
    rows = yield search
    return rows
