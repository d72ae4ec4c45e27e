"""``memory.audit``: what graphmem believed and why it changed, for auditors.

Each method is one read transaction and counts nothing as accessed. Times are ISO 8601 with
a zone (``2026-03-01T09:00:00Z``), a datetime with a zone, a date alone (``2026-03-01``,
midnight UTC) or a friendly form (``now``, ``today``, ``yesterday``, ``3 days ago``); a time
of day without a zone is refused. :class:`Audit` serves :class:`~graphmem.client.Memory`,
:class:`AsyncAudit` serves :class:`~graphmem.client.AsyncMemory`, with the same methods.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import Protocol, TypeVar

from graphmem.core.audit.plan import AuditPlans
from graphmem.core.plans import Plan
from graphmem.models.audit import Beliefs, ContradictionRecord, Diff, Explanation, Timeline

T = TypeVar("T")


class Runs(Protocol):
    """How the sync client carries out a plan."""

    def __call__(self, plan: Plan[T], /) -> T: ...


class RunsAsync(Protocol):
    """How the async client carries out a plan."""

    def __call__(self, plan: Plan[T], /) -> Awaitable[T]: ...


Time = datetime | str


class Audit:
    """The audits of a :class:`~graphmem.client.Memory` (``memory.audit``)."""

    def __init__(self, core: AuditPlans, run: Runs) -> None:
        #: The plans of the client's core, and the client's way of carrying one out.
        self._core, self._run = core, run

    def beliefs(
        self,
        as_of: Time | None = None,
        *,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """The facts believed at transaction time ``as_of`` (now when None), each as it was
        believed then (status and valid interval), newest first or ranked by ``query``; the
        facts believed then and forgotten since are listed without their words."""
        return self._run(self._core.audit_beliefs(as_of, query_text=query, limit=limit, ns=ns))

    def truths(
        self,
        valid_at: Time,
        *,
        as_of: Time | None = None,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """The facts believed (now, or at ``as_of``) to have been true at valid time
        ``valid_at``: a fact superseded since still counts within its closed interval."""
        plan = self._core.audit_beliefs(
            as_of, valid_at=valid_at, query_text=query, limit=limit, ns=ns
        )
        return self._run(plan)

    def diff(self, since: Time, until: Time | None = None, *, ns: str | None = None) -> Diff:
        """What changed after ``since`` up to ``until`` (now when None): facts that became
        believed, retired (and how, by what, why), forgotten, contradictions opened and
        resolved."""
        return self._run(self._core.audit_diff(since, until, ns=ns))

    def timeline(self, id: str, *, ns: str | None = None) -> Timeline:
        """The lineage of fact ``id`` (forgotten too): its versions and every change to them
        (supersessions, merges, retractions, contradictions, references, review flags,
        erasures) with both clocks, actors, reasons and consolidation runs."""
        return self._run(self._core.audit_timeline(id, ns=ns))

    def contradictions(
        self, *, open_only: bool = True, limit: int = 100, ns: str | None = None
    ) -> list[ContradictionRecord]:
        """The contradictions, open ones only unless ``open_only`` is False, oldest first."""
        plan = self._core.audit_contradictions(open_only=open_only, limit=limit, ns=ns)
        return self._run(plan)

    def explain(self, id: str, *, ns: str | None = None) -> Explanation:
        """The last change to fact ``id`` in words an agent can quote ("believed from … until
        …, replaced by … because … (consolidation run …)")."""
        return self._run(self._core.audit_explain(id, ns=ns))


class AsyncAudit:
    """The audits of an :class:`~graphmem.client.AsyncMemory` (``memory.audit``)."""

    def __init__(self, core: AuditPlans, run: RunsAsync) -> None:
        self._core, self._run = core, run

    async def beliefs(
        self,
        as_of: Time | None = None,
        *,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """As :meth:`Audit.beliefs`."""
        return await self._run(
            self._core.audit_beliefs(as_of, query_text=query, limit=limit, ns=ns)
        )

    async def truths(
        self,
        valid_at: Time,
        *,
        as_of: Time | None = None,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """As :meth:`Audit.truths`."""
        plan = self._core.audit_beliefs(
            as_of, valid_at=valid_at, query_text=query, limit=limit, ns=ns
        )
        return await self._run(plan)

    async def diff(self, since: Time, until: Time | None = None, *, ns: str | None = None) -> Diff:
        """As :meth:`Audit.diff`."""
        return await self._run(self._core.audit_diff(since, until, ns=ns))

    async def timeline(self, id: str, *, ns: str | None = None) -> Timeline:
        """As :meth:`Audit.timeline`."""
        return await self._run(self._core.audit_timeline(id, ns=ns))

    async def contradictions(
        self, *, open_only: bool = True, limit: int = 100, ns: str | None = None
    ) -> list[ContradictionRecord]:
        """As :meth:`Audit.contradictions`."""
        plan = self._core.audit_contradictions(open_only=open_only, limit=limit, ns=ns)
        return await self._run(plan)

    async def explain(self, id: str, *, ns: str | None = None) -> Explanation:
        """As :meth:`Audit.explain`."""
        return await self._run(self._core.audit_explain(id, ns=ns))
