"""The asynchronous remote client, :class:`AsyncRemoteMemory`:
:class:`~graphmem.client.AsyncMemory`'s methods, arguments and results, awaited, answered by a
``graphmem serve`` over HTTP (httpx)::

    async with AsyncRemoteMemory("https://memory.example.com", key, ns="user-42") as memory:
        await memory.remember("The user works at Microsoft.")
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import httpx
from pydantic import SecretStr

from graphmem.models import (
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    FactInput,
    IngestResult,
    Message,
    NamespaceStats,
    RecallResult,
)
from graphmem.models.consolidation import ConsolidationResult, ConsolidationRunRecord, UndoResult
from graphmem.models.erasure import ForgetResult, ForgetVerification, ReviewFlag
from graphmem.models.namespaces import DropResult, ImportResult, NamespaceSummary
from graphmem.remote.audit import AsyncRemoteAudit
from graphmem.remote.base import RemoteBase, not_ready, ready_call
from graphmem.remote.call import Call, answer, error_data, export_record
from graphmem.remote.calls_admin import DEFAULT_BATCH, DEFAULT_PAGE
from graphmem.settings import GraphmemSettings

if TYPE_CHECKING:
    import numpy.typing as npt

    from graphmem.core.forget.plan import ForgetOptions
    from graphmem.core.recall.scope import ContextOptions, RecallOptions
    from graphmem.models import FactFields

T = TypeVar("T")


class AsyncRemoteMemory(RemoteBase):
    """Asynchronous client of a ``graphmem serve``, with
    :class:`~graphmem.client.AsyncMemory`'s methods, awaited; otherwise as
    :class:`~graphmem.remote.RemoteMemory`. Close it, or use it as an async context manager.
    """

    def __init__(
        self,
        url: str | None = None,
        key: str | SecretStr | None = None,
        *,
        ns: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
        settings: GraphmemSettings | None = None,
    ) -> None:
        super().__init__(url, key, ns=ns, timeout=timeout, settings=settings)
        self._http = httpx.AsyncClient(**self.client_options(), transport=transport)

    async def connect(self) -> AsyncRemoteMemory:
        """Check now, rather than on first use, that the server answers and is ready."""
        call = ready_call()
        response = await self._exchange(call)
        if response.status_code != 200:
            raise not_ready(response.status_code, error_data(response.content))
        return self

    @property
    def audit(self) -> AsyncRemoteAudit:
        """The audits: beliefs, truths, diff, timeline, contradictions, explain."""
        return AsyncRemoteAudit(self._calls, self._send)

    async def close(self) -> None:
        """Close the connections to the server."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRemoteMemory:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- sending calls --------------------------------------------------------------------------
    async def _exchange(self, call: Call[Any]) -> httpx.Response:
        """The answer to ``call``; a write is sent again, with the same idempotency key,
        as :meth:`retry_after` says."""
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    params=call.query(),
                    json=call.json,
                    content=call.content,
                    headers=call.headers(),
                )
            except httpx.HTTPError as exc:
                wait = self.retry_after(call, attempt, error=exc)
                if wait is None:
                    raise self.failure(exc, call) from exc
            else:
                wait = self.retry_after(call, attempt, status=response.status_code)
                if wait is None:
                    return response
            await asyncio.sleep(wait)
            attempt += 1

    async def _send(self, call: Call[T]) -> T:
        response = await self._exchange(call)
        result = answer(call, response.status_code, response.content)
        args = call.progress_args(result)
        if args is not None and call.progress is not None:
            reported = call.progress(*args)
            if inspect.isawaitable(reported):  # as AsyncMemory, an async callback is awaited
                await reported
        return result

    @asynccontextmanager
    async def _lines(self, call: Call[Any]) -> AsyncIterator[AsyncIterator[str]]:
        """The lines of a streamed answer as they come."""
        try:
            async with self._http.stream(call.method, call.path) as response:
                if not 200 <= response.status_code < 300:
                    answer(call, response.status_code, await response.aread())
                yield response.aiter_lines()
        except httpx.HTTPError as exc:
            raise self.failure(exc, call) from exc

    # --- the memory API -------------------------------------------------------------------------
    async def remember(
        self,
        text: str,
        *,
        ns: str | None = None,
        allow_forgotten: bool = False,
        **fields: Unpack[FactFields],
    ) -> Fact:
        """As :meth:`graphmem.client.AsyncMemory.remember`."""
        return await self._send(
            self._calls.remember(text, ns=ns, allow_forgotten=allow_forgotten, **fields)
        )

    async def remember_many(
        self,
        facts: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        vectors: npt.ArrayLike | None = None,
        allow_forgotten: bool = False,
    ) -> list[Fact]:
        """As :meth:`graphmem.client.AsyncMemory.remember_many`; the server embeds the facts
        (``vectors`` is refused: ClientUsageError)."""
        return await self._send(
            self._calls.remember_many(
                facts, ns=ns, vectors=vectors, allow_forgotten=allow_forgotten
            )
        )

    async def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        session_id: str | None = None,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
        extract: bool | None = None,
        allow_forgotten: bool = False,
    ) -> IngestResult:
        """As :meth:`graphmem.client.AsyncMemory.ingest`, in one request; ``progress`` is called
        once, with every message, when the server has stored them."""
        call = self._calls.ingest(
            messages,
            ns=ns,
            session_id=session_id,
            batch_size=batch_size,
            progress=progress,
            extract=extract,
            allow_forgotten=allow_forgotten,
        )
        return await self._send(call)

    async def recall(
        self,
        query: str,
        *,
        ns: str | None = None,
        **options: Unpack[RecallOptions],
    ) -> RecallResult:
        """As :meth:`graphmem.client.AsyncMemory.recall` (a ``config`` mapping changes the
        server's configuration)."""
        return await self._send(self._calls.recall(query, ns=ns, **options))

    async def context(
        self,
        query: str,
        *,
        ns: str | None = None,
        budget_tokens: int,
        **options: Unpack[ContextOptions],
    ) -> ContextBlock:
        """As :meth:`graphmem.client.AsyncMemory.context`, counted by the server's tokenizer."""
        return await self._send(
            self._calls.context(query, ns=ns, budget_tokens=budget_tokens, **options)
        )

    async def get(self, id: str, *, ns: str | None = None) -> Fact | Episode:
        """As :meth:`graphmem.client.AsyncMemory.get`."""
        return await self._send(self._calls.get(id, ns=ns))

    async def history(self, id: str, *, ns: str | None = None) -> FactHistory:
        """As :meth:`graphmem.client.AsyncMemory.history`."""
        return await self._send(self._calls.history(id, ns=ns))

    async def stats(self, *, ns: str | None = None) -> NamespaceStats:
        """As :meth:`graphmem.client.AsyncMemory.stats`."""
        return await self._send(self._calls.stats(ns=ns))

    async def pin(self, id: str, *, ns: str | None = None, pinned: bool = True) -> Fact:
        """As :meth:`graphmem.client.AsyncMemory.pin`."""
        return await self._send(self._calls.pin(id, ns=ns, pinned=pinned))

    # --- conflicts, retractions and consolidation ---------------------------------------------
    async def contradict(
        self, a: str, b: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """As :meth:`graphmem.client.AsyncMemory.contradict`."""
        return await self._send(self._calls.contradict(a, b, reason=reason, ns=ns))

    async def resolve(
        self, a: str, b: str, *, keep: str, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """As :meth:`graphmem.client.AsyncMemory.resolve`."""
        return await self._send(self._calls.resolve(a, b, keep=keep, reason=reason, ns=ns))

    async def retract(self, id: str, *, reason: str | None = None, ns: str | None = None) -> Fact:
        """As :meth:`graphmem.client.AsyncMemory.retract`."""
        return await self._send(self._calls.retract(id, reason=reason, ns=ns))

    async def consolidate(
        self,
        *,
        ns: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        progress: Callable[[int, int], object] | None = None,
        tiers: bool | None = None,
        summaries: bool | None = None,
    ) -> ConsolidationResult:
        """As :meth:`graphmem.client.AsyncMemory.consolidate`, with the server's proposer;
        ``progress`` is called once, when the run has handled every cluster."""
        call = self._calls.consolidate(
            ns=ns,
            force=force,
            dry_run=dry_run,
            progress=progress,
            tiers=tiers,
            summaries=summaries,
        )
        return await self._send(call)

    async def undo(self, run_id: str, *, ns: str | None = None) -> UndoResult:
        """As :meth:`graphmem.client.AsyncMemory.undo`."""
        return await self._send(self._calls.undo(run_id, ns=ns))

    async def consolidation_runs(
        self, *, ns: str | None = None, ids: Sequence[str] | None = None, limit: int = 20
    ) -> list[ConsolidationRunRecord]:
        """As :meth:`graphmem.client.AsyncMemory.consolidation_runs`."""
        return await self._send(self._calls.consolidation_runs(ns=ns, ids=ids, limit=limit))

    # --- erasure and review -------------------------------------------------------------------
    async def forget(
        self,
        ids: str | Sequence[str] | None = None,
        *,
        reason: str,
        ns: str | None = None,
        **options: Unpack[ForgetOptions],
    ) -> ForgetResult:
        """As :meth:`graphmem.client.AsyncMemory.forget`: it erases unless ``dry_run``. The actor
        is the API key's name (``actor`` is refused: ClientUsageError); ``progress`` is called
        once, with everything erased."""
        return await self._send(self._calls.forget(ids, reason=reason, ns=ns, **options))

    async def verify_forgotten(
        self, target: str, *, text: str | None = None, ns: str | None = None
    ) -> ForgetVerification:
        """As :meth:`graphmem.client.AsyncMemory.verify_forgotten`."""
        return await self._send(self._calls.verify_forgotten(target, text=text, ns=ns))

    async def review(
        self,
        *,
        fact_id: str | None = None,
        open_only: bool = True,
        limit: int = 100,
        ns: str | None = None,
    ) -> list[ReviewFlag]:
        """As :meth:`graphmem.client.AsyncMemory.review`."""
        call = self._calls.review(fact_id=fact_id, open_only=open_only, limit=limit, ns=ns)
        return await self._send(call)

    async def confirm(
        self, id: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[ReviewFlag]:
        """As :meth:`graphmem.client.AsyncMemory.confirm`."""
        return await self._send(self._calls.confirm(id, reason=reason, ns=ns))

    # --- namespaces ---------------------------------------------------------------------------
    async def namespaces(self) -> list[NamespaceSummary]:
        """The namespaces the API key opens that hold something, with their counts."""
        return await self._send(self._calls.namespaces())

    async def export(
        self, ns: str | None = None, *, page_size: int = DEFAULT_PAGE
    ) -> AsyncIterator[dict[str, Any]]:
        """As :meth:`graphmem.client.AsyncMemory.export`: awaited, it gives an async iterator
        of the records as the server streams them (it pages with its own ``page_size``)."""
        return self._records(self._calls.export(ns, page_size=page_size))

    async def _records(self, call: Call[Any]) -> AsyncIterator[dict[str, Any]]:
        async with self._lines(call) as lines:
            number = 0
            async for line in lines:
                number += 1
                record = export_record(line, number)
                if record is not None:
                    yield record

    async def import_(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        ns: str | None = None,
        batch_size: int = DEFAULT_PAGE,
        progress: Callable[[int], object] | None = None,
    ) -> ImportResult:
        """As :meth:`graphmem.client.AsyncMemory.import_` (an admin key), in one request;
        ``progress`` is called once, with every record, when the import is visible."""
        call = self._calls.import_(records, ns=ns, batch_size=batch_size, progress=progress)
        return await self._send(call)

    async def drop_namespace(
        self,
        ns: str,
        *,
        confirm: bool = False,
        dry_run: bool = False,
        batch_size: int = DEFAULT_BATCH,
        progress: Callable[[int], object] | None = None,
    ) -> DropResult:
        """As :meth:`graphmem.client.AsyncMemory.drop_namespace` (an admin key); ``progress`` is
        called once, with every node removed."""
        call = self._calls.drop_namespace(
            ns, confirm=confirm, dry_run=dry_run, batch_size=batch_size, progress=progress
        )
        return await self._send(call)


__all__ = ["AsyncRemoteMemory"]
