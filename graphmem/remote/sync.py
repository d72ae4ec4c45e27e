"""The synchronous remote client, :class:`RemoteMemory`: :class:`~graphmem.client.Memory`'s
methods, arguments and results, answered by a ``graphmem serve`` over HTTP (httpx). An agent
switches with one line::

    with RemoteMemory("https://memory.example.com", key, ns="user-42") as memory:
        memory.remember("The user works at Microsoft.")
        print(memory.context("where does the user work?", budget_tokens=300).text)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
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
from graphmem.remote.audit import RemoteAudit
from graphmem.remote.base import RemoteBase, not_ready, ready_call
from graphmem.remote.call import Call, answer, error_data, export_record, refuse_awaitable
from graphmem.remote.calls_admin import DEFAULT_BATCH, DEFAULT_PAGE
from graphmem.settings import GraphmemSettings

if TYPE_CHECKING:
    import numpy.typing as npt

    from graphmem.core.forget.plan import ForgetOptions
    from graphmem.core.recall.scope import ContextOptions, RecallOptions
    from graphmem.models import FactFields

T = TypeVar("T")


class RemoteMemory(RemoteBase):
    """Synchronous client of a ``graphmem serve``, with :class:`~graphmem.client.Memory`'s
    methods. ``url`` and ``key`` default to ``GRAPHMEM_SERVER_URL`` and ``GRAPHMEM_API_KEY``;
    every method takes ``ns``, which defaults to the client's ``ns`` (``GRAPHMEM_NAMESPACE``).
    The server attributes every change to the key's name. Close it, or use it as a context
    manager; a server that cannot be reached is a :class:`~graphmem.errors.ServiceError`.
    """

    def __init__(
        self,
        url: str | None = None,
        key: str | SecretStr | None = None,
        *,
        ns: str | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        settings: GraphmemSettings | None = None,
    ) -> None:
        super().__init__(url, key, ns=ns, timeout=timeout, settings=settings)
        self._http = httpx.Client(**self.client_options(), transport=transport)

    def connect(self) -> RemoteMemory:
        """Check now, rather than on first use, that the server answers and is ready."""
        call = ready_call()
        response = self._exchange(call)
        if response.status_code != 200:
            raise not_ready(response.status_code, error_data(response.content))
        return self

    @property
    def audit(self) -> RemoteAudit:
        """The audits: beliefs, truths, diff, timeline, contradictions, explain."""
        return RemoteAudit(self._calls, self._send)

    def close(self) -> None:
        """Close the connections to the server."""
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- sending calls --------------------------------------------------------------------------
    def _exchange(self, call: Call[Any]) -> httpx.Response:
        """The answer to ``call``; a write is sent again, with the same idempotency key,
        as :meth:`retry_after` says."""
        attempt = 0
        while True:
            try:
                response = self._http.request(
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
            time.sleep(wait)
            attempt += 1

    def _send(self, call: Call[T]) -> T:
        response = self._exchange(call)
        result = answer(call, response.status_code, response.content)
        args = call.progress_args(result)
        if args is not None and call.progress is not None:
            refuse_awaitable(call.progress(*args))
        return result

    @contextmanager
    def _lines(self, call: Call[Any]) -> Iterator[Iterator[str]]:
        """The lines of a streamed answer as they come."""
        try:
            with self._http.stream(call.method, call.path) as response:
                if not 200 <= response.status_code < 300:
                    answer(call, response.status_code, response.read())
                yield response.iter_lines()
        except httpx.HTTPError as exc:
            raise self.failure(exc, call) from exc

    # --- the memory API -------------------------------------------------------------------------
    def remember(
        self,
        text: str,
        *,
        ns: str | None = None,
        allow_forgotten: bool = False,
        **fields: Unpack[FactFields],
    ) -> Fact:
        """As :meth:`graphmem.client.Memory.remember`."""
        return self._send(
            self._calls.remember(text, ns=ns, allow_forgotten=allow_forgotten, **fields)
        )

    def remember_many(
        self,
        facts: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None = None,
        vectors: npt.ArrayLike | None = None,
        allow_forgotten: bool = False,
    ) -> list[Fact]:
        """As :meth:`graphmem.client.Memory.remember_many`; the server embeds the facts
        (``vectors`` is refused: ClientUsageError)."""
        return self._send(
            self._calls.remember_many(
                facts, ns=ns, vectors=vectors, allow_forgotten=allow_forgotten
            )
        )

    def ingest(
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
        """As :meth:`graphmem.client.Memory.ingest`, in one request; ``progress`` is called
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
        return self._send(call)

    def recall(
        self,
        query: str,
        *,
        ns: str | None = None,
        **options: Unpack[RecallOptions],
    ) -> RecallResult:
        """As :meth:`graphmem.client.Memory.recall` (a ``config`` mapping changes the
        server's configuration)."""
        return self._send(self._calls.recall(query, ns=ns, **options))

    def context(
        self,
        query: str,
        *,
        ns: str | None = None,
        budget_tokens: int,
        **options: Unpack[ContextOptions],
    ) -> ContextBlock:
        """As :meth:`graphmem.client.Memory.context`, counted by the server's tokenizer."""
        return self._send(self._calls.context(query, ns=ns, budget_tokens=budget_tokens, **options))

    def get(self, id: str, *, ns: str | None = None) -> Fact | Episode:
        """As :meth:`graphmem.client.Memory.get`."""
        return self._send(self._calls.get(id, ns=ns))

    def history(self, id: str, *, ns: str | None = None) -> FactHistory:
        """As :meth:`graphmem.client.Memory.history`."""
        return self._send(self._calls.history(id, ns=ns))

    def stats(self, *, ns: str | None = None) -> NamespaceStats:
        """As :meth:`graphmem.client.Memory.stats`."""
        return self._send(self._calls.stats(ns=ns))

    def pin(self, id: str, *, ns: str | None = None, pinned: bool = True) -> Fact:
        """As :meth:`graphmem.client.Memory.pin`."""
        return self._send(self._calls.pin(id, ns=ns, pinned=pinned))

    # --- conflicts, retractions and consolidation ---------------------------------------------
    def contradict(
        self, a: str, b: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """As :meth:`graphmem.client.Memory.contradict`."""
        return self._send(self._calls.contradict(a, b, reason=reason, ns=ns))

    def resolve(
        self, a: str, b: str, *, keep: str, reason: str | None = None, ns: str | None = None
    ) -> list[Fact]:
        """As :meth:`graphmem.client.Memory.resolve`."""
        return self._send(self._calls.resolve(a, b, keep=keep, reason=reason, ns=ns))

    def retract(self, id: str, *, reason: str | None = None, ns: str | None = None) -> Fact:
        """As :meth:`graphmem.client.Memory.retract`."""
        return self._send(self._calls.retract(id, reason=reason, ns=ns))

    def consolidate(
        self,
        *,
        ns: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        progress: Callable[[int, int], object] | None = None,
        tiers: bool | None = None,
        summaries: bool | None = None,
    ) -> ConsolidationResult:
        """As :meth:`graphmem.client.Memory.consolidate`, with the server's proposer;
        ``progress`` is called once, when the run has handled every cluster."""
        call = self._calls.consolidate(
            ns=ns,
            force=force,
            dry_run=dry_run,
            progress=progress,
            tiers=tiers,
            summaries=summaries,
        )
        return self._send(call)

    def undo(self, run_id: str, *, ns: str | None = None) -> UndoResult:
        """As :meth:`graphmem.client.Memory.undo`."""
        return self._send(self._calls.undo(run_id, ns=ns))

    def consolidation_runs(
        self, *, ns: str | None = None, ids: Sequence[str] | None = None, limit: int = 20
    ) -> list[ConsolidationRunRecord]:
        """As :meth:`graphmem.client.Memory.consolidation_runs`."""
        return self._send(self._calls.consolidation_runs(ns=ns, ids=ids, limit=limit))

    # --- erasure and review -------------------------------------------------------------------
    def forget(
        self,
        ids: str | Sequence[str] | None = None,
        *,
        reason: str,
        ns: str | None = None,
        **options: Unpack[ForgetOptions],
    ) -> ForgetResult:
        """As :meth:`graphmem.client.Memory.forget`: it erases unless ``dry_run``. The actor
        is the API key's name (``actor`` is refused: ClientUsageError); ``progress`` is called
        once, with everything erased."""
        return self._send(self._calls.forget(ids, reason=reason, ns=ns, **options))

    def verify_forgotten(
        self, target: str, *, text: str | None = None, ns: str | None = None
    ) -> ForgetVerification:
        """As :meth:`graphmem.client.Memory.verify_forgotten`."""
        return self._send(self._calls.verify_forgotten(target, text=text, ns=ns))

    def review(
        self,
        *,
        fact_id: str | None = None,
        open_only: bool = True,
        limit: int = 100,
        ns: str | None = None,
    ) -> list[ReviewFlag]:
        """As :meth:`graphmem.client.Memory.review`."""
        call = self._calls.review(fact_id=fact_id, open_only=open_only, limit=limit, ns=ns)
        return self._send(call)

    def confirm(
        self, id: str, *, reason: str | None = None, ns: str | None = None
    ) -> list[ReviewFlag]:
        """As :meth:`graphmem.client.Memory.confirm`."""
        return self._send(self._calls.confirm(id, reason=reason, ns=ns))

    # --- namespaces ---------------------------------------------------------------------------
    def namespaces(self) -> list[NamespaceSummary]:
        """The namespaces the API key opens that hold something, with their counts."""
        return self._send(self._calls.namespaces())

    def export(
        self, ns: str | None = None, *, page_size: int = DEFAULT_PAGE
    ) -> Iterator[dict[str, Any]]:
        """As :meth:`graphmem.client.Memory.export`: the records as the server streams them
        (it pages with its own ``page_size``)."""
        return self._records(self._calls.export(ns, page_size=page_size))

    def _records(self, call: Call[Any]) -> Iterator[dict[str, Any]]:
        with self._lines(call) as lines:
            for number, line in enumerate(lines, 1):
                record = export_record(line, number)
                if record is not None:
                    yield record

    def import_(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        ns: str | None = None,
        batch_size: int = DEFAULT_PAGE,
        progress: Callable[[int], object] | None = None,
    ) -> ImportResult:
        """As :meth:`graphmem.client.Memory.import_` (an admin key), in one request;
        ``progress`` is called once, with every record, when the import is visible."""
        call = self._calls.import_(records, ns=ns, batch_size=batch_size, progress=progress)
        return self._send(call)

    def drop_namespace(
        self,
        ns: str,
        *,
        confirm: bool = False,
        dry_run: bool = False,
        batch_size: int = DEFAULT_BATCH,
        progress: Callable[[int], object] | None = None,
    ) -> DropResult:
        """As :meth:`graphmem.client.Memory.drop_namespace` (an admin key); ``progress`` is
        called once, with every node removed."""
        call = self._calls.drop_namespace(
            ns, confirm=confirm, dry_run=dry_run, batch_size=batch_size, progress=progress
        )
        return self._send(call)


__all__ = ["RemoteMemory"]
