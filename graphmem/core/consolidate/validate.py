"""Validation of a proposer's plan against the cluster it was shown, before any write.

Each operation is checked on its own, in the plan's order: known numbers, the operation's
number of facts, believed (not retired, not forgotten) facts in the namespace, no SUPERSEDES
cycle, one operation per fact, and what each kind needs (an open contradiction to resolve,
none already there to open, no reference twice). A bad operation is rejected with its reason;
the valid rest proceeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from graphmem.models import describe_validation_error
from graphmem.models.consolidation import (
    OPERATION_FACTS,
    AppliedOperation,
    Cluster,
    ProposedOperation,
    RejectedOperation,
)

Checked = tuple[list[AppliedOperation], list[RejectedOperation]]


def parse_operations(
    raw: Sequence[Any], cluster: int
) -> tuple[list[ProposedOperation], list[RejectedOperation]]:
    """The plan's operations as models; one that is not an operation is rejected alone."""
    ops, rejected = [], []
    for i, item in enumerate(raw):
        try:
            ops.append(ProposedOperation.model_validate(item))
        except ValidationError as exc:
            op = item.get("op") if isinstance(item, Mapping) else None
            rejected.append(
                RejectedOperation(
                    op=str(op) if op is not None else None,
                    rejection=f"operation {i + 1} is malformed: {describe_validation_error(exc)}",
                    cluster=cluster,
                )
            )
    return ops, rejected


def validate_plan(cluster: Cluster, ops: Sequence[ProposedOperation], ns: str) -> Checked:
    """The operations that pass, and those rejected with why."""
    accepted: list[AppliedOperation] = []
    rejected: list[RejectedOperation] = []
    count = len(cluster.facts)
    supersedes = {(e.source, e.target) for e in cluster.edges if e.type == "SUPERSEDES"}
    open_pairs = {
        frozenset((e.source, e.target)) for e in cluster.edges if e.type == "CONTRADICTS" and e.open
    }
    references = {(e.source, e.target) for e in cluster.edges if e.type == "REFERENCES"}
    # Every replacement the plan proposes, for the cycle check: a cycle is refused whole.
    proposed = [
        (op.facts[0], op.facts[1])
        for op in ops
        if op.op in ("SUPERSEDE", "RESOLVE")
        and len(op.facts) == 2
        and all(1 <= n <= count for n in op.facts)
    ]
    used: dict[int, int] = {}
    for index, op in enumerate(ops):

        def reject(why: str, op: ProposedOperation = op) -> None:
            known = tuple(cluster.fact(n).id for n in op.facts if 1 <= n <= count)
            rejected.append(
                RejectedOperation(
                    op=op.op,
                    numbers=tuple(op.facts),
                    facts=known,
                    reason=op.reason,
                    rejection=why,
                    cluster=cluster.index,
                )
            )

        why = _problem(cluster, op, ns, supersedes | set(proposed), open_pairs, references)
        if why is None:
            taken = [n for n in op.facts if n in used]
            if taken:
                why = (
                    f"fact {taken[0]} already has an operation in this plan "
                    f"(operation {used[taken[0]] + 1}); one operation per fact"
                )
        if why is not None:
            reject(why)
            continue
        for n in op.facts:
            used[n] = index
        accepted.append(
            AppliedOperation(
                op=op.op,
                facts=tuple(cluster.fact(n).id for n in op.facts),
                numbers=tuple(op.facts),
                reason=op.reason,
                cluster=cluster.index,
            )
        )
    return accepted, rejected


def _problem(
    cluster: Cluster,
    op: ProposedOperation,
    ns: str,
    supersedes: set[tuple[int, int]],
    open_pairs: set[frozenset[int]],
    references: set[tuple[int, int]],
) -> str | None:
    """Why ``op`` cannot be applied, or None."""
    count = len(cluster.facts)
    unknown = sorted({n for n in op.facts if not 1 <= n <= count})
    if unknown:
        return f"unknown fact number {', '.join(map(str, unknown))} (the list has 1 to {count})"
    size, more, shape = OPERATION_FACTS[op.op]
    if len(op.facts) < size or (not more and len(op.facts) > size):
        return f"{op.op} takes {shape}; got {len(op.facts)} number(s)"
    if len(set(op.facts)) != len(op.facts):
        return f"{op.op} names the same fact twice"
    for n in op.facts:
        fact = cluster.fact(n)
        if fact.ns != ns:
            return f"fact {n} is in another namespace"
        if fact.forgotten:
            return f"fact {n} was forgotten"
        if fact.status != "active":
            return f"fact {n} is retired ({fact.status}); only believed facts can change"
    if op.op in ("SUPERSEDE", "RESOLVE"):
        newer, older = op.facts
        if _reaches(supersedes, older, newer):
            return f"{op.op} {newer} over {older} would make a SUPERSEDES cycle"
    pair = frozenset(op.facts[:2])
    if op.op == "RESOLVE" and pair not in open_pairs:
        return f"facts {op.facts[0]} and {op.facts[1]} have no open contradiction to resolve"
    if op.op == "CONTRADICT" and pair in open_pairs:
        return f"facts {op.facts[0]} and {op.facts[1]} already have an open contradiction"
    if op.op == "REFERENCE" and (op.facts[0], op.facts[1]) in references:
        return f"fact {op.facts[0]} already references fact {op.facts[1]}"
    return None


def _reaches(edges: set[tuple[int, int]], start: int, goal: int) -> bool:
    """Whether following ``edges`` (newer → older) from ``start`` reaches ``goal``."""
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        for a, b in edges:
            if a == node and b not in seen:
                if b == goal:
                    return True
                seen.add(b)
                todo.append(b)
    return False
