"""review and confirm: the open review flags, and closing them by confirmation.

Flags are made where a fact changes (:func:`graphmem.core.forget.flags.flag_changed`);
superseding, merging, retracting or forgetting a flagged fact closes its flags too.
"""

from __future__ import annotations

from graphmem.core.actor import current_actor
from graphmem.core.base import CoreBase
from graphmem.core.checks import checked_flag, checked_ids, checked_integer, checked_reason
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work, single
from graphmem.core.writes import refuse_forgotten
from graphmem.errors import NotFoundError
from graphmem.models.erasure import ReviewFlag
from graphmem.store.cypher import query

#: The most flags one review call lists.
MAX_REVIEW = 10_000


class ReviewPlans(CoreBase):
    def review(
        self,
        *,
        fact_id: str | None = None,
        open_only: bool = True,
        limit: int = 100,
        ns: str | None,
    ) -> Plan[list[ReviewFlag]]:
        ns = self._ns(ns)
        if fact_id is not None:
            (fact_id,) = yield from self._full_ids(ns, checked_ids("id", [fact_id]))
        params = {
            "ns": ns,
            "id": fact_id,
            "open_only": checked_flag("open_only", open_only),
            "limit": checked_integer("limit", limit, 1, MAX_REVIEW),
        }
        rows: Rows = yield Transaction("read", lambda: single(Run(query("review_list"), params)))
        return [ReviewFlag.model_validate(r["flag"]) for r in rows]

    def confirm(
        self, item_id: str, *, reason: str | None = None, ns: str | None
    ) -> Plan[list[ReviewFlag]]:
        """Closes the open flags of ``item_id`` as confirmed; returns them, closed."""
        ns = self._ns(ns)
        (item_id,) = yield from self._full_ids(ns, checked_ids("id", [item_id]))
        params = {
            "ns": ns,
            "id": item_id,
            "actor": current_actor(),
            "reason": checked_reason(reason),
        }

        def work() -> Work[Rows]:
            (out,) = yield Run(query("review_confirm"), params)
            if not out["found"]:
                yield from refuse_forgotten(ns, item_id)
                raise NotFoundError(
                    f"no fact or episode {item_id!r} in namespace {ns!r}", ids=(item_id,)
                )
            flags: Rows = out["flags"]
            return flags

        rows: Rows = yield Transaction("write", work)
        return [ReviewFlag.model_validate(r) for r in rows]
