"""The audits: beliefs at a transaction time, truths at a valid time, the diff between two
times, the timeline of a fact, contradictions, and a change explained in words.

Every audit is one read transaction; none stamps access counts. Times are read by
:func:`graphmem.core.audit.times.moment` (ISO 8601 with a zone, a date, or a friendly form).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from graphmem.core.audit.times import moment
from graphmem.core.audit.words import events, explain, texts_named
from graphmem.core.checks import (
    QUERY_TEXT,
    checked_flag,
    checked_ids,
    checked_integer,
    checked_value,
)
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work, single
from graphmem.core.recall.plan import RecallPlans
from graphmem.core.writes import refuse_episode
from graphmem.errors import InvalidInputError, NotFoundError
from graphmem.models.audit import (
    BeliefChange,
    Beliefs,
    ContradictionRecord,
    Diff,
    ErasedFact,
    Explanation,
    RunSummary,
    Timeline,
)
from graphmem.models.results import Fact, OpenContradiction, ReviewMark
from graphmem.store.cypher import query

#: The most facts one beliefs or truths call returns, and the most rows a diff list holds.
MAX_AUDIT = 10_000


class AuditPlans(RecallPlans):
    def audit_beliefs(
        self,
        as_of: Any = None,
        *,
        valid_at: Any = None,
        query_text: str | None = None,
        limit: int = 100,
        ns: str | None,
    ) -> Plan[Beliefs]:
        """What was believed at ``as_of`` (now when None), true at ``valid_at`` when given,
        ranked by ``query_text`` when given."""
        ns = self._ns(ns)
        now = datetime.now(UTC)
        t = None if as_of is None else moment("as_of", as_of, now=now)
        v = None if valid_at is None else moment("valid_at", valid_at, now=now)
        limit = checked_integer("limit", limit, 1, MAX_AUDIT)
        if query_text is not None:
            query_text = checked_value(QUERY_TEXT, "query", query_text)
            facts = yield from self._ranked_beliefs(ns, query_text, t, v, limit)
            truncated = False
        else:
            facts, truncated = yield from _listed_beliefs(ns, t, v, limit)
        erased: Rows = []
        if t is not None:
            facts, erased = yield from _believed_then(ns, facts, t, v)
        return Beliefs(
            ns=ns,
            as_of=t,
            valid_at=v,
            query=query_text,
            facts=tuple(facts),
            forgotten=tuple(ErasedFact.model_validate(r["erased"]) for r in erased),
            limit=limit,
            truncated=truncated,
        )

    def _ranked_beliefs(
        self,
        ns: str,
        query_text: str,
        t: datetime | None,
        v: datetime | None,
        limit: int,
    ) -> Plan[list[Fact]]:
        """The facts believed at ``t`` and true at ``v`` that best match ``query_text``, best
        first: at most ``limit``, and at most 100 (a recall's most hits)."""
        found = yield from self.recall(
            query_text,
            ns=ns,
            k=min(limit, 100),
            as_of=t,
            valid_at=v,
            kinds=["fact"],
            expand_references=False,
            track_access=False,
        )
        return [hit.fact for hit in found.hits if hit.fact is not None]

    def audit_diff(self, since: Any, until: Any = None, *, ns: str | None) -> Plan[Diff]:
        """What changed after ``since`` up to ``until`` (now when None)."""
        ns = self._ns(ns)
        now = datetime.now(UTC)
        t1 = moment("since", since, now=now)
        t2 = now if until is None else moment("until", until, now=now)
        if t2 < t1:
            raise InvalidInputError(f"until ({t2.isoformat()}) is before since ({t1.isoformat()})")

        def work() -> Work[tuple[Rows, Rows]]:
            (changes,) = yield Run(query("audit_diff"), {"ns": ns, "since": t1, "until": t2})
            erased = yield Run(
                query("audit_erased"),
                {
                    "ns": ns,
                    "kinds": ["fact", "episode"],
                    "as_of": None,
                    "since": t1,
                    "until": t2,
                    "limit": MAX_AUDIT,
                },
            )
            return [changes], erased

        (changes,), erased = yield Transaction("read", work)
        contradictions = [ContradictionRecord.model_validate(c) for c in changes["contradictions"]]
        return Diff(
            ns=ns,
            since=t1,
            until=t2,
            believed=tuple(BeliefChange.model_validate(b) for b in changes["believed"]),
            retired=tuple(BeliefChange.model_validate(b) for b in changes["retired"]),
            forgotten=tuple(ErasedFact.model_validate(r["erased"]) for r in erased),
            contradictions_opened=tuple(c for c in contradictions if t1 < c.at <= t2),
            contradictions_resolved=tuple(
                sorted(
                    (c for c in contradictions if c.resolved_at and t1 < c.resolved_at <= t2),
                    key=lambda c: (c.resolved_at, c.a),
                )
            ),
        )

    def audit_contradictions(
        self, *, open_only: bool = True, limit: int = 100, ns: str | None
    ) -> Plan[list[ContradictionRecord]]:
        ns = self._ns(ns)
        params = {
            "ns": ns,
            "open_only": checked_flag("open_only", open_only),
            "limit": checked_integer("limit", limit, 1, MAX_AUDIT),
        }
        rows = yield Transaction("read", lambda: single(Run(query("audit_contradictions"), params)))
        return [ContradictionRecord.model_validate(r["contradiction"]) for r in rows]

    def audit_timeline(self, fact_id: str, *, ns: str | None) -> Plan[Timeline]:
        """The lineage of ``fact_id`` (a forgotten one too) as events."""
        timeline, _ = yield from self._lineage(fact_id, ns)
        return timeline

    def audit_explain(self, fact_id: str, *, ns: str | None) -> Plan[Explanation]:
        """The last change to ``fact_id`` in words."""
        timeline, parts = yield from self._lineage(fact_id, ns)
        facts, erased, runs, texts = parts
        text, event = explain(
            timeline.fact_id, facts, erased, runs, list(timeline.events), timeline.head_id, texts
        )
        return Explanation(ns=timeline.ns, fact_id=timeline.fact_id, text=text, event=event)

    def _lineage(self, fact_id: str, ns: str | None) -> Plan[tuple[Timeline, Any]]:
        ns = self._ns(ns)
        (fact_id,) = yield from self._full_ids(ns, checked_ids("id", [fact_id]))

        def work() -> Work[tuple[Rows, Rows]]:
            rows = yield Run(query("audit_lineage"), {"ns": ns, "id": fact_id})
            if not rows[0]["facts"] and not rows[0]["forgotten"]:
                yield from refuse_episode(ns, fact_id, "a timeline follows facts")
                return [], []
            row = rows[0]
            actors = {
                item.get(key)
                for name in (
                    "steps",
                    "contradictions",
                    "references",
                    "flags",
                    "retractions",
                    "tiers",
                )
                for item in row[name]
                for key in ("actor", "resolved_by", "closed_by")
            } | {f["actor"] for f in row["forgotten"]}
            ids = sorted(a for a in actors if isinstance(a, str))
            runs = yield Run(query("audit_runs"), {"ns": ns, "ids": ids})
            return rows, runs

        rows, run_rows = yield Transaction("read", work)
        if not rows:
            raise NotFoundError(f"no fact {fact_id!r} in namespace {ns!r}", ids=(fact_id,))
        row = rows[0]
        facts = {f.id: f for f in (Fact.model_validate(x) for x in row["facts"])}
        erased = {e.id: e for e in (ErasedFact.model_validate(x) for x in row["forgotten"])}
        runs = {r.id: r for r in (RunSummary.model_validate(x["run"]) for x in run_rows)}
        told = events(facts, erased, runs, row)
        return (
            Timeline(
                ns=ns,
                fact_id=fact_id,
                head_id=_head(fact_id, facts, row["steps"]),
                facts=tuple(sorted(facts.values(), key=lambda f: (f.recorded_at, f.id))),
                forgotten=tuple(sorted(erased.values(), key=lambda e: (e.erased_at, e.id))),
                events=tuple(told),
                runs=tuple(runs.values()),
            ),
            (facts, erased, runs, texts_named(row)),
        )


#: The lists of an audit_lineage row whose items name an actor (a run, a key, ...).
_ACTED = ("steps", "contradictions", "references", "flags", "retractions", "tiers")


def _listed_beliefs(
    ns: str, t: datetime | None, v: datetime | None, limit: int
) -> Plan[tuple[list[Fact], bool]]:
    """The first ``limit`` facts believed at ``t`` and true at ``v``, newest first, and
    whether there were more."""
    params = {
        "ns": ns,
        "as_of": t,
        "valid_at": v,
        "include_retired": False,
        "tags": None,
        "since": None,
        "until": None,
        "limit": limit + 1,
    }
    rows = yield Transaction("read", lambda: single(Run(query("audit_beliefs"), params)))
    return [Fact.model_validate(r["fact"]) for r in rows[:limit]], len(rows) > limit


def _believed_then(
    ns: str, facts: list[Fact], t: datetime, v: datetime | None
) -> Plan[tuple[list[Fact], Rows]]:
    """Each of ``facts`` as believed at ``t``, with the contradictions and review flags open
    then; and the facts believed then and erased since (``audit_erased`` rows)."""

    def then() -> Work[tuple[Rows, Rows]]:
        ids = [f.id for f in facts]
        marks = yield Run(query("audit_marks_then"), {"ns": ns, "ids": ids, "as_of": t})
        gone: Rows = []
        if v is None:  # an erased fact's valid time is gone with its words
            params = {
                "ns": ns,
                "kinds": ["fact"],
                "as_of": t,
                "since": None,
                "until": None,
                "limit": MAX_AUDIT,
            }
            gone = yield Run(query("audit_erased"), params)
        return marks, gone

    marks, erased = yield Transaction("read", then)
    by_id = {m["id"]: m for m in marks}
    believed = [
        f.as_believed_at(t).model_copy(
            update={
                "contradictions": tuple(
                    OpenContradiction.model_validate(c) for c in by_id[f.id]["contradictions"]
                ),
                "review": tuple(ReviewMark.model_validate(r) for r in by_id[f.id]["review"]),
            }
        )
        for f in facts
    ]
    return believed, erased


def _head(fact_id: str, facts: dict[str, Fact], steps: Rows) -> str | None:
    """The believed fact the line from ``fact_id`` leads to now, following the replacements
    (through forgotten facts too: their edges stay)."""
    after = {}
    for step in steps:
        merged = step["type"] == "MERGED_INTO"
        older, newer = (step["newer"], step["older"]) if merged else (step["older"], step["newer"])
        after[older] = newer
    seen: set[str] = set()
    current = fact_id
    while current in after and current not in seen:
        seen.add(current)
        current = after[current]
    fact = facts.get(current)
    return current if fact is not None and fact.believed else None
