"""Reading consolidation runs back, and undoing one exactly."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from graphmem.core.actor import current_actor
from graphmem.core.base import CoreBase
from graphmem.core.checks import checked_ids
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work, single
from graphmem.errors import NotFoundError, UndoRefusedError
from graphmem.models import native_time
from graphmem.models.consolidation import (
    AppliedOperation,
    ConsolidationRunRecord,
    LLMUsage,
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
    "valid_from",
    "valid_from_set_at",
    "tier",
    "tier_at",
    "tier_by",
)


class RunPlans(CoreBase):
    def consolidation_runs(
        self, *, ns: str | None, ids: Sequence[str] | None = None, limit: int = 20
    ) -> Plan[list[ConsolidationRunRecord]]:
        ns = self._ns(ns)
        checked = list(checked_ids("run id", ids)) if ids is not None else None
        params = {"ns": ns, "ids": checked, "limit": limit}
        rows: Rows = yield Transaction(
            "read", lambda: single(Run(query("consolidate_runs"), params))
        )
        return [run_record(r["run"]) for r in rows]

    def undo(self, run_id: str, *, ns: str | None, actor: str | None = None) -> Plan[UndoResult]:
        ns = self._ns(ns)
        actor = actor or current_actor()
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
                withdrawn_summaries=done["withdrawn"],
                undone_at=native_time(done["undone_at"]),
            )

        result: UndoResult = yield Transaction("write", work)
        return result


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
        started_by=row.get("started_by"),
    )
