"""contradict, resolve and retract: consolidation's operations for an agent that knows,
applied at once in one transaction with ``api`` as their actor."""

from __future__ import annotations

from graphmem.core.actor import current_actor
from graphmem.core.base import CoreBase
from graphmem.core.checks import checked_ids, checked_reason
from graphmem.core.consolidate.rewrite import rewrite_runs
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work
from graphmem.core.writes import check_targets
from graphmem.errors import InvalidInputError
from graphmem.models import Fact
from graphmem.models.consolidation import AppliedOperation, OperationName
from graphmem.store.cypher import query


def _reason(reason: object) -> str:
    """The reason an agent gives: the same text rules as ``remember``'s reason."""
    return checked_reason(reason) or ""


class AgentPlans(CoreBase):
    def contradict(self, a: str, b: str, *, reason: str | None, ns: str | None) -> Plan[list[Fact]]:
        ns = self._ns(ns)
        a, b = yield from self._full_ids(ns, checked_ids("id", [a, b]))
        return (yield from self._agent_op("CONTRADICT", ns, (a, b), _reason(reason)))

    def resolve(
        self, a: str, b: str, *, keep: str, reason: str | None, ns: str | None
    ) -> Plan[list[Fact]]:
        ns = self._ns(ns)
        a, b = checked_ids("id", [a, b])
        (keep,) = checked_ids("keep", [keep])
        a, b, keep = yield from self._full_ids(ns, [a, b, keep])
        if keep not in (a, b):
            raise InvalidInputError(f"keep must be one of the two facts, {a!r} or {b!r}")
        loser = b if keep == a else a
        return (yield from self._agent_op("RESOLVE", ns, (keep, loser), _reason(reason)))

    def retract(self, fact_id: str, *, reason: str | None, ns: str | None) -> Plan[Fact]:
        ns = self._ns(ns)
        (fact_id,) = yield from self._full_ids(ns, checked_ids("id", [fact_id]))
        facts = yield from self._agent_op("RETRACT", ns, (fact_id,), _reason(reason))
        return facts[0]

    def _agent_op(
        self, op: OperationName, ns: str, ids: tuple[str, ...], reason: str
    ) -> Plan[list[Fact]]:
        if len(set(ids)) != len(ids):
            raise InvalidInputError(f"{op.lower()} needs two different facts")
        verb = {"CONTRADICT": "contradict", "RESOLVE": "resolve", "RETRACT": "retract"}[op]
        applied = AppliedOperation(
            op=op, facts=ids, numbers=tuple(range(1, len(ids) + 1)), reason=reason, cluster=0
        )

        actor = current_actor()

        def work() -> Work[list[Fact]]:
            yield Run(query("fact_lock"), {"ns": ns, "ids": list(ids)})
            found = yield Run(query("fact_targets"), {"ns": ns, "ids": list(ids)})
            check_targets(
                found, set(ids), ns, (verb, f"{verb}ed" if verb != "retract" else "retracted")
            )
            if len(ids) == 2:
                rows: Rows = yield Run(query("consolidate_facts"), {"ns": ns, "ids": list(ids)})
                open_now = any(
                    e["type"] == "CONTRADICTS" and e["open"] for r in rows for e in r["edges"]
                )
                if op == "CONTRADICT" and open_now:
                    raise InvalidInputError(
                        f"facts {ids[0]!r} and {ids[1]!r} already have an open contradiction"
                    )
                if op == "RESOLVE" and not open_now:
                    raise InvalidInputError(
                        f"facts {ids[0]!r} and {ids[1]!r} have no open contradiction to resolve"
                    )
            yield from rewrite_runs(ns, actor, [applied])
            stored = yield Run(query("fact_get"), {"ns": ns, "ids": list(ids)})
            return [Fact.model_validate(r["fact"]) for r in stored]

        facts: list[Fact] = yield Transaction("write", work)
        return facts
