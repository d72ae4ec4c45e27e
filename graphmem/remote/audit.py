"""``memory.audit`` of the remote clients: the audits of :mod:`graphmem.client.audit` with the
same methods, arguments and results, answered by the server. :class:`RemoteAudit` serves
:class:`~graphmem.remote.RemoteMemory`, :class:`AsyncRemoteAudit`
:class:`~graphmem.remote.AsyncRemoteMemory`."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import Protocol, TypeVar

from graphmem.models.audit import Beliefs, ContradictionRecord, Diff, Explanation, Timeline
from graphmem.remote.call import Call
from graphmem.remote.calls_admin import AdminCalls

T = TypeVar("T")
Time = datetime | str


class Sends(Protocol):
    """How the sync remote client makes a call."""

    def __call__(self, call: Call[T], /) -> T: ...


class SendsAsync(Protocol):
    """How the async remote client makes a call."""

    def __call__(self, call: Call[T], /) -> Awaitable[T]: ...


class RemoteAudit:
    """The audits of a :class:`~graphmem.remote.RemoteMemory` (``memory.audit``)."""

    def __init__(self, calls: AdminCalls, send: Sends) -> None:
        #: The client's calls, and its way of making one.
        self._calls, self._send = calls, send

    def beliefs(
        self,
        as_of: Time | None = None,
        *,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """As :meth:`graphmem.client.audit.Audit.beliefs`."""
        return self._send(self._calls.audit_beliefs(as_of, query=query, limit=limit, ns=ns))

    def truths(
        self,
        valid_at: Time,
        *,
        as_of: Time | None = None,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """As :meth:`graphmem.client.audit.Audit.truths`."""
        call = self._calls.audit_truths(valid_at, as_of=as_of, query=query, limit=limit, ns=ns)
        return self._send(call)

    def diff(self, since: Time, until: Time | None = None, *, ns: str | None = None) -> Diff:
        """As :meth:`graphmem.client.audit.Audit.diff`."""
        return self._send(self._calls.audit_diff(since, until, ns=ns))

    def timeline(self, id: str, *, ns: str | None = None) -> Timeline:
        """As :meth:`graphmem.client.audit.Audit.timeline`."""
        return self._send(self._calls.audit_timeline(id, ns=ns))

    def contradictions(
        self, *, open_only: bool = True, limit: int = 100, ns: str | None = None
    ) -> list[ContradictionRecord]:
        """As :meth:`graphmem.client.audit.Audit.contradictions`."""
        return self._send(self._calls.audit_contradictions(open_only=open_only, limit=limit, ns=ns))

    def explain(self, id: str, *, ns: str | None = None) -> Explanation:
        """As :meth:`graphmem.client.audit.Audit.explain`."""
        return self._send(self._calls.audit_explain(id, ns=ns))


class AsyncRemoteAudit:
    """The audits of an :class:`~graphmem.remote.AsyncRemoteMemory` (``memory.audit``)."""

    def __init__(self, calls: AdminCalls, send: SendsAsync) -> None:
        self._calls, self._send = calls, send

    async def beliefs(
        self,
        as_of: Time | None = None,
        *,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """As :meth:`graphmem.client.audit.Audit.beliefs`."""
        return await self._send(self._calls.audit_beliefs(as_of, query=query, limit=limit, ns=ns))

    async def truths(
        self,
        valid_at: Time,
        *,
        as_of: Time | None = None,
        query: str | None = None,
        limit: int = 100,
        ns: str | None = None,
    ) -> Beliefs:
        """As :meth:`graphmem.client.audit.Audit.truths`."""
        call = self._calls.audit_truths(valid_at, as_of=as_of, query=query, limit=limit, ns=ns)
        return await self._send(call)

    async def diff(self, since: Time, until: Time | None = None, *, ns: str | None = None) -> Diff:
        """As :meth:`graphmem.client.audit.Audit.diff`."""
        return await self._send(self._calls.audit_diff(since, until, ns=ns))

    async def timeline(self, id: str, *, ns: str | None = None) -> Timeline:
        """As :meth:`graphmem.client.audit.Audit.timeline`."""
        return await self._send(self._calls.audit_timeline(id, ns=ns))

    async def contradictions(
        self, *, open_only: bool = True, limit: int = 100, ns: str | None = None
    ) -> list[ContradictionRecord]:
        """As :meth:`graphmem.client.audit.Audit.contradictions`."""
        call = self._calls.audit_contradictions(open_only=open_only, limit=limit, ns=ns)
        return await self._send(call)

    async def explain(self, id: str, *, ns: str | None = None) -> Explanation:
        """As :meth:`graphmem.client.audit.Audit.explain`."""
        return await self._send(self._calls.audit_explain(id, ns=ns))


__all__ = ["AsyncRemoteAudit", "RemoteAudit", "Sends", "SendsAsync"]
