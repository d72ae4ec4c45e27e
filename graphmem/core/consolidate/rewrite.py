"""The statements that apply validated operations, shared by consolidation runs (actor: the
run's id) and the agent's own ``contradict``, ``resolve`` and ``retract`` (actor ``api``)."""

from __future__ import annotations

from collections.abc import Sequence

from graphmem.core.forget.flags import flag_changed
from graphmem.core.plans import Run, Work
from graphmem.models.consolidation import AppliedOperation
from graphmem.store.cypher import query

#: The operations that change the graph (KEEP does not).
REWRITTEN = frozenset({"SUPERSEDE", "MERGE", "CONTRADICT", "RESOLVE", "RETRACT", "REFERENCE"})


def rewrite_runs(ns: str, actor: str, ops: Sequence[AppliedOperation]) -> Work[None]:
    """Applies ``ops`` (validated, on believed facts the transaction has locked), and flags
    for review what rested on each fact they retire."""
    supersede = [
        {"new": o.facts[0], "old": o.facts[1], "reason": o.reason, "resolve": o.op == "RESOLVE"}
        for o in ops
        if o.op in ("SUPERSEDE", "RESOLVE")
    ]
    merge = [
        {"survivor": o.facts[0], "duplicate": d, "reason": o.reason}
        for o in ops
        if o.op == "MERGE"
        for d in o.facts[1:]
    ]
    contradicts = [
        {"a": o.facts[0], "b": o.facts[1], "reason": o.reason} for o in ops if o.op == "CONTRADICT"
    ]
    references = [
        {"source": o.facts[0], "target": o.facts[1], "reason": o.reason}
        for o in ops
        if o.op == "REFERENCE"
    ]
    retract = [{"id": o.facts[0], "reason": o.reason} for o in ops if o.op == "RETRACT"]
    common = {"ns": ns, "actor": actor}
    if supersede:
        yield Run(query("rewrite_supersede"), {**common, "rows": supersede})
        replaced = [{"id": r["old"], "by": r["new"], "reason": r["reason"]} for r in supersede]
        yield from flag_changed(ns, "superseded", actor, replaced)
    if merge:
        yield Run(query("rewrite_merge"), {**common, "rows": merge})
        merged = [{"id": r["duplicate"], "by": r["survivor"], "reason": r["reason"]} for r in merge]
        yield from flag_changed(ns, "merged", actor, merged)
    if contradicts or references:
        yield Run(
            query("rewrite_link"),
            {**common, "contradicts": contradicts, "references": references},
        )
    if retract:
        yield Run(query("rewrite_retract"), {**common, "rows": retract})
        yield from flag_changed(ns, "retracted", actor, retract)
