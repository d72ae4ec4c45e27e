"""The plain reads and pinning: get, history (the SUPERSEDES chain), stats, pin, id prefixes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import get_args

from graphmem.core.base import ID_PREFIX, CoreBase
from graphmem.core.checks import checked_flag, checked_ids
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work, single
from graphmem.core.writes import check_targets, refuse_episode, refuse_forgotten
from graphmem.errors import InvalidInputError, NotFoundError
from graphmem.models import Episode, Fact, FactHistory, FactStatus, NamespaceStats, SupersedesEdge
from graphmem.store.cypher import query


class ReadPlans(CoreBase):
    def get(self, item_id: str, *, ns: str | None) -> Plan[Fact | Episode]:
        ns = self._ns(ns)
        (item_id,) = yield from self._full_ids(ns, checked_ids("id", [item_id]))

        def work() -> Work[Fact | Episode | None]:
            rows = yield Run(query("fact_get"), {"ns": ns, "ids": [item_id]})
            if rows:
                return Fact.model_validate(rows[0]["fact"])
            rows = yield Run(query("episode_get"), {"ns": ns, "ids": [item_id]})
            if rows:
                return Episode.model_validate(rows[0]["episode"])
            yield from refuse_forgotten(ns, item_id)
            return None

        item: Fact | Episode | None = yield Transaction("read", work)
        if item is None:
            raise NotFoundError(
                f"no fact or episode {item_id!r} in namespace {ns!r}", ids=(item_id,)
            )
        return item

    def history(self, fact_id: str, *, ns: str | None) -> Plan[FactHistory]:
        ns = self._ns(ns)
        (fact_id,) = yield from self._full_ids(ns, checked_ids("id", [fact_id]))

        def work() -> Work[Rows]:
            rows = yield Run(query("fact_lineage"), {"ns": ns, "id": fact_id})
            if not rows or not rows[0]["facts"]:
                yield from refuse_forgotten(ns, fact_id)
                yield from refuse_episode(
                    ns,
                    fact_id,
                    "history follows the SUPERSEDES chain between facts (get shows the episode)",
                )
            return rows

        rows: Rows = yield Transaction("read", work)
        if not rows or not rows[0]["facts"]:
            raise NotFoundError(f"no fact {fact_id!r} in namespace {ns!r}", ids=(fact_id,))
        facts = sorted(
            (Fact.model_validate(f) for f in rows[0]["facts"]),
            key=lambda f: (f.recorded_at, f.id),
        )
        edges = sorted(
            (SupersedesEdge.model_validate(e) for e in rows[0]["edges"] if e is not None),
            key=lambda e: (e.at, e.newer_id, e.older_id),
        )
        by_id = {f.id: f for f in facts}
        head: Fact | None = by_id[fact_id]
        seen = set()
        while head is not None and head.superseded_by is not None and head.id not in seen:
            seen.add(head.id)
            head = by_id.get(head.superseded_by)
        return FactHistory(
            fact_id=fact_id,
            head_id=head.id if head is not None and head.believed else None,
            facts=tuple(facts),
            edges=tuple(edges),
        )

    def match_ids(self, prefixes: Iterable[str], *, ns: str | None) -> Plan[dict[str, list[str]]]:
        """For each id prefix (8 to 36 characters of an id), up to three full ids in the
        namespace that start with it: facts, episodes and forgotten ones (tombstones)."""
        ns = self._ns(ns)
        wanted = checked_ids("prefixes", prefixes)
        for prefix in wanted:
            if not ID_PREFIX.fullmatch(prefix):
                raise InvalidInputError(
                    f"{prefix!r} is not an id or a prefix of one (8 to 36 characters "
                    "of 0-9, a-f and -)"
                )
        found: dict[str, list[str]] = {}
        if wanted:
            params = {"ns": ns, "prefixes": sorted(set(wanted))}
            rows: Rows = yield Transaction("read", lambda: single(Run(query("id_prefix"), params)))
            found = {row["prefix"]: row["ids"] for row in rows}
        return {prefix: found.get(prefix, []) for prefix in wanted}

    def stats(self, *, ns: str | None) -> Plan[NamespaceStats]:
        ns = self._ns(ns)
        rows: Rows = yield Transaction("read", lambda: single(Run(query("ns_stats"), {"ns": ns})))
        row = rows[0]
        # Every status, 0 where none: a script reads the same keys whatever the data.
        by_status = dict.fromkeys(get_args(FactStatus), 0)
        by_status.update({s["status"]: s["n"] for s in row["statuses"]})
        return NamespaceStats(
            ns=ns,
            facts=sum(by_status.values()),
            facts_by_status=by_status,
            **{k: row[k] for k in row if k != "statuses"},
        )

    def pin(self, fact_id: str, *, ns: str | None, pinned: bool = True) -> Plan[Fact]:
        ns = self._ns(ns)
        (fact_id,) = yield from self._full_ids(ns, checked_ids("id", [fact_id]))
        pinned = checked_flag("pinned", pinned)

        def work() -> Work[Rows]:
            # Locked first, as a supersession locks it: the check below cannot go stale.
            yield Run(query("fact_lock"), {"ns": ns, "ids": [fact_id]})
            (target,) = yield Run(query("fact_targets"), {"ns": ns, "ids": [fact_id]})
            if target["status"] is None and not target["forgotten"]:
                yield from refuse_episode(ns, fact_id, "only facts are pinned")
            check_targets([target], {fact_id} if pinned else set(), ns, ("pin", "pinned"))
            return (yield Run(query("fact_pin"), {"ns": ns, "id": fact_id, "pinned": pinned}))

        rows: Rows = yield Transaction("write", work)
        return Fact.model_validate(rows[0]["fact"])
