"""The summary pass of a consolidation run: coherent clusters of related facts recorded close
in time, each summarised by the proposer into one new fact with ``SUMMARIZES`` edges to its
members, which stay believed.

Clusters are found by density over meaning and time (:func:`summary_clusters`) among the
newest believed facts not summarised yet; the proposer (an LLM) writes the summary and says
which members it covers; validation keeps known, distinct members (two at least) and a text a
fact may have; one write transaction per summary re-checks the members, stores the summary
(recorded like any fact, its actor the run) and links it. Undo retracts the summary and
removes its edges.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from graphmem.core.base import CoreBase
from graphmem.core.consolidate.clusters import number
from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.consolidate.progress import Outcome, Records, heartbeat
from graphmem.core.plans import Plan, Propose, Rows, Run, Transaction, Work, single
from graphmem.core.writes import fact_rows, fact_work
from graphmem.models import Fact, FactInput, describe_validation_error, native_time
from graphmem.models.consolidation import (
    AppliedOperation,
    Cluster,
    Proposal,
    RejectedOperation,
)
from graphmem.models.fields import FactText
from graphmem.store.cypher import query

#: The source of a summary fact.
SUMMARY_SOURCE = "consolidation:summary"
_DAY = 86_400.0


class ProposedSummary(BaseModel):
    """A proposer's ``SUMMARIZE``: the numbers it covers and the summary's text."""

    model_config = ConfigDict(extra="ignore")

    facts: list[int]
    text: FactText
    reason: str = ""


def summary_clusters(
    times: Sequence[float], vectors: np.ndarray, config: ConsolidationConfig
) -> list[list[int]]:
    """Density clusters (by position) of facts recorded at ``times`` (seconds) with unit
    ``vectors``: two facts are neighbours at cosine ``summary_similarity`` or more and at most
    ``summary_window_days`` apart; a fact with ``summary_min_facts - 1`` neighbours is a core,
    cores that are neighbours share a cluster, and any other fact joins its most similar core
    neighbour. A cluster keeps its ``summary_max_facts`` most central members and counts when
    it has ``summary_min_facts`` and their mean pairwise cosine reaches ``summary_coherence``.
    Ordered by their earliest fact."""
    count = len(times)
    if count < config.summary_min_facts:
        return []
    similar = vectors @ vectors.T
    at = np.asarray(times, dtype=float)
    close = np.abs(at[:, None] - at[None, :]) <= config.summary_window_days * _DAY
    near = (similar >= config.summary_similarity) & close
    np.fill_diagonal(near, False)
    core = near.sum(axis=1) >= config.summary_min_facts - 1
    label = np.full(count, -1)
    for start in np.flatnonzero(core):
        if label[start] >= 0:
            continue
        label[start] = start
        todo = [start]
        while todo:
            node = todo.pop()
            for other in np.flatnonzero(near[node] & core & (label < 0)):
                label[other] = start
                todo.append(other)
    for point in np.flatnonzero(~core):
        cores = np.flatnonzero(near[point] & core)
        if cores.size:
            label[point] = label[cores[np.argmax(similar[point, cores])]]
    clusters = []
    for root in np.unique(label[label >= 0]):
        members = np.flatnonzero(label == root)
        if members.size > config.summary_max_facts:
            inner = similar[np.ix_(members, members)]
            central = np.argsort(-inner.mean(axis=1), kind="stable")
            members = np.sort(members[central[: config.summary_max_facts]])
        if members.size < config.summary_min_facts:
            continue
        inner = similar[np.ix_(members, members)]
        coherence = (inner.sum() - np.trace(inner)) / (members.size * (members.size - 1))
        if coherence >= config.summary_coherence:
            clusters.append([int(m) for m in members])
    clusters.sort(key=lambda m: (min(at[i] for i in m), m))
    return clusters


def checked_summary(
    cluster: Cluster, proposal: Proposal
) -> tuple[list[AppliedOperation], list[RejectedOperation]]:
    """The proposal's ``SUMMARIZE`` (at most one) as an operation on the cluster's facts, or
    why it was refused."""
    accepted: list[AppliedOperation] = []
    rejected: list[RejectedOperation] = []

    def refuse(why: str, item: Any = None) -> None:
        op = item.get("op") if isinstance(item, Mapping) else None
        rejected.append(RejectedOperation(op=op, rejection=why, cluster=cluster.index))

    if proposal.operations is None:
        refuse(f"the proposal was unusable: {proposal.error}")
        return accepted, rejected
    for item in proposal.operations:
        if not isinstance(item, Mapping) or item.get("op") != "SUMMARIZE" or accepted:
            refuse("a summary request takes one SUMMARIZE operation", item)
            continue
        try:
            summary = ProposedSummary.model_validate(item)
        except ValidationError as exc:
            refuse(f"the summary is malformed: {describe_validation_error(exc)}", item)
            continue
        count = len(cluster.facts)
        numbers = list(dict.fromkeys(summary.facts))
        unknown = [n for n in numbers if not 1 <= n <= count]
        if unknown or len(numbers) < 2:
            why = f"unknown fact number {unknown[0]}" if unknown else "it covers fewer than 2"
            refuse(f"the summary cannot be written: {why}", item)
            continue
        accepted.append(
            AppliedOperation(
                op="SUMMARIZE",
                facts=tuple(cluster.fact(n).id for n in numbers),
                numbers=tuple(numbers),
                reason=summary.reason,
                cluster=cluster.index,
                text=summary.text,
            )
        )
    return accepted, rejected


class SummaryPlans(CoreBase):
    def _summaries(self, ns: str, run_id: str, dry_run: bool, outcome: Outcome) -> Plan[None]:
        """The run's summary pass (see the module)."""
        config = self.consolidation
        clock = time.perf_counter()
        params = {"ns": ns, "scan": config.summary_scan}
        read = Run(query("summary_candidates"), params)
        rows: Rows = yield Transaction("read", lambda: single(read))
        rows = [r for r in rows if r["embedding"] is not None]
        raw = np.asarray([r["embedding"] for r in rows], dtype=np.float64).reshape(len(rows), -1)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        vectors = raw / np.where(norms == 0, 1, norms)
        times = [native_time(r["fact"]["recorded_at"]).timestamp() for r in rows]
        found = summary_clusters(times, vectors, config)
        first = outcome.clusters + 1
        outcome.clusters += len(found)
        for index, members in enumerate(found, start=first):
            facts = {rows[i]["fact"]["id"]: rows[i]["fact"] for i in members}
            cluster = number(index, facts, list(facts), set(), (), ())
            proposal: Proposal = yield Propose(cluster, summarize=True)
            outcome.usage = outcome.usage + proposal.usage
            accepted, rejected = checked_summary(cluster, proposal)
            if not dry_run and (accepted or rejected):
                accepted, rejected = yield from self._write_summary(
                    ns, run_id, cluster, proposal, (accepted, rejected)
                )
                outcome.beat = time.monotonic()
            outcome.applied += accepted
            outcome.rejected += rejected
        outcome.timings["summaries"] = round(time.perf_counter() - clock, 4)

    def _write_summary(
        self,
        ns: str,
        run_id: str,
        cluster: Cluster,
        proposal: Proposal,
        checked: tuple[list[AppliedOperation], list[RejectedOperation]],
    ) -> Plan[tuple[list[AppliedOperation], list[RejectedOperation]]]:
        """Stores the checked summary (if one passed) and links it to its members, and
        records the cluster on the run, in one transaction that re-checks the members (each
        still believed and in no believed summary)."""
        accepted, rejected = checked
        op = accepted[0] if accepted else None
        create = None
        if op is not None and op.text is not None:
            item = FactInput(text=op.text, source=SUMMARY_SOURCE)
            vectors = yield from self._embed((op.text,))
            rows = fact_rows(ns, [item], vectors, None)
            create = fact_work(ns, [item], rows, run_id, self._guard, allow_forgotten=True)
        lock_ttl = self.consolidation.lock_ttl

        def work() -> Work[tuple[list[AppliedOperation], list[RejectedOperation]]]:
            yield from heartbeat(ns, run_id, lock_ttl)
            done: list[AppliedOperation] = []
            refused = list(rejected)
            if op is not None and create is not None:
                made = yield from _linked(ns, run_id, op, create)
                if made is None:
                    why = "its members were retired or summarised meanwhile"
                    refused.append(
                        RejectedOperation(
                            op=op.op, facts=op.facts, rejection=why, cluster=op.cluster
                        )
                    )
                else:
                    done.append(made)
            record = Records()
            record.add(cluster, proposal, done, refused, True)
            yield Run(query("consolidate_record"), record.params(ns, run_id, None))
            return done, refused

        written: tuple[list[AppliedOperation], list[RejectedOperation]]
        written = yield Transaction("write", work)
        return written


def _linked(
    ns: str, run_id: str, op: AppliedOperation, create: Callable[[], Work[list[Fact]]]
) -> Work[AppliedOperation | None]:
    """In the transaction: ``op``'s summary stored (``create``) and linked to the members
    still free to take one, kept for undo; None when fewer than two are."""
    free = yield Run(query("summary_members"), {"ns": ns, "ids": list(op.facts)})
    ids = {r["id"] for r in free}
    members = [f for f in op.facts if f in ids]
    if len(members) < 2:
        return None
    (fact,) = yield from create()
    snap = {"ns": ns, "run": run_id}
    rows = [{"id": fact.id, "cluster": op.cluster}]
    yield Run(query("consolidate_snapshot"), {**snap, "rows": rows})
    link = {"summary": fact.id, "members": members, "reason": op.reason}
    yield Run(query("summary_link"), {**snap, **link})
    yield Run(query("consolidate_snapshot_after"), {**snap, "clusters": [op.cluster]})
    return op.model_copy(update={"facts": tuple(members), "summary_id": fact.id})
