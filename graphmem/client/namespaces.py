"""The administrator's methods of both clients: ``namespaces``, ``export``, ``import_``,
``drop_namespace`` and the API keys, ``keys`` (:mod:`graphmem.core.namespaces` and
:mod:`graphmem.core.keys` plan them; :class:`NamespaceMethods` is
:class:`~graphmem.client.Memory`'s, :class:`AsyncNamespaceMethods`
:class:`~graphmem.client.AsyncMemory`'s, the same methods awaited)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from graphmem.client.keys import AsyncKeys, Keys
from graphmem.client.service_secret import service_signer
from graphmem.core.namespaces.drop import DEFAULT_BATCH
from graphmem.core.namespaces.plan import DEFAULT_PAGE
from graphmem.models.namespaces import DropResult, ImportResult, NamespaceSummary

if TYPE_CHECKING:
    from graphmem.core.memory_core import MemoryCore
    from graphmem.core.namespaces.export import NamespaceExport
    from graphmem.core.plans import Plan
    from graphmem.settings import GraphmemSettings

T = TypeVar("T")


class NamespaceMethods:
    """:class:`~graphmem.client.Memory`'s namespace methods."""

    if TYPE_CHECKING:
        _core: MemoryCore
        settings: GraphmemSettings

        def _run(self, plan: Plan[T]) -> T: ...

    @property
    def keys(self) -> Keys:
        """The API keys of ``graphmem serve``: create, list, revoke, check, resign."""
        return Keys(self._core, self._run, lambda: service_signer(self.settings))

    def namespaces(self) -> list[NamespaceSummary]:
        """Every namespace of the database, by name, with its counts and its last write: the
        one call that reads across namespaces (an administrator's listing). A namespace that
        an import has staged data for and not made visible shows it as ``import_pending``."""
        return self._run(self._core.namespaces())

    def export(
        self, ns: str | None = None, *, page_size: int = DEFAULT_PAGE
    ) -> Iterator[dict[str, Any]]:
        """The records of an export of namespace ``ns`` with its whole history, JSON-ready, one
        page (``page_size`` nodes, one read transaction) at a time: a header, every node, every
        relationship between them, and an end record with the counts. Write one per line for
        the JSONL file ``graphmem export`` writes (docs/guides/namespaces.md describes it).
        Each page is consistent on its own; ``changed_during_export`` in the end record says
        whether the namespace changed meanwhile."""
        return self._records(self._core.export(ns, page_size=page_size))

    def _records(self, export: NamespaceExport) -> Iterator[dict[str, Any]]:
        while (plan := export.next_page()) is not None:
            yield from self._run(plan)

    def import_(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        ns: str | None = None,
        batch_size: int = DEFAULT_PAGE,
        progress: Callable[[int], object] | None = None,
    ) -> ImportResult:
        """Import an export's records into namespace ``ns``, which must be empty, on this
        database: ids and both clocks kept exactly, except ids another namespace here already
        holds, which get new ones (``remapped``; every reference follows). All or nothing:
        the records are staged out of sight in batches of ``batch_size`` and made visible in
        one transaction; a failed import removes what it staged, a killed one leaves it
        invisible until the next import into ``ns`` (or a drop of it) removes it. Refused
        before anything is written: a namespace that holds anything
        (NamespaceNotEmptyError), records that are not a whole export of this format version
        (ExportFormatError), vectors of another embedder (ImportEmbedderMismatchError).
        ``progress`` is called with the records each batch staged."""
        plan = self._core.import_(records, ns=ns, batch_size=batch_size, progress=progress)
        return self._run(plan)

    def drop_namespace(
        self,
        ns: str,
        *,
        confirm: bool = False,
        dry_run: bool = False,
        batch_size: int = DEFAULT_BATCH,
        progress: Callable[[int], object] | None = None,
    ) -> DropResult:
        """Remove every node of namespace ``ns`` for good, ``batch_size`` per transaction:
        facts, episodes, tombstones, consolidation runs and records, lock nodes, and what
        unfinished imports into it staged. Unlike ``forget(everything=True)`` it keeps no
        tombstone, so the audit trail goes too and the same texts may be stored again.
        Refused without ``confirm=True`` (ConfirmationRequiredError); ``dry_run`` counts what
        would go. ``progress`` is called with the nodes each batch deleted."""
        plan = self._core.drop_namespace(
            ns, confirm=confirm, dry_run=dry_run, batch_size=batch_size, progress=progress
        )
        return self._run(plan)


class AsyncNamespaceMethods:
    """:class:`~graphmem.client.AsyncMemory`'s namespace methods: the same, awaited."""

    if TYPE_CHECKING:
        _core: MemoryCore
        settings: GraphmemSettings

        async def _run(self, plan: Plan[T]) -> T: ...

    @property
    def keys(self) -> AsyncKeys:
        """The API keys of ``graphmem serve``: create, list, revoke, check, resign."""
        return AsyncKeys(self._core, self._run, lambda: service_signer(self.settings))

    async def namespaces(self) -> list[NamespaceSummary]:
        """See :meth:`~graphmem.client.Memory.namespaces`."""
        return await self._run(self._core.namespaces())

    async def export(
        self, ns: str | None = None, *, page_size: int = DEFAULT_PAGE
    ) -> AsyncIterator[dict[str, Any]]:
        """See :meth:`~graphmem.client.Memory.export`; awaited, it gives an async iterator
        (``async for record in await memory.export("user-42")``)."""
        return self._records(self._core.export(ns, page_size=page_size))

    async def _records(self, export: NamespaceExport) -> AsyncIterator[dict[str, Any]]:
        while (plan := export.next_page()) is not None:
            for record in await self._run(plan):
                yield record

    async def import_(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        ns: str | None = None,
        batch_size: int = DEFAULT_PAGE,
        progress: Callable[[int], object] | None = None,
    ) -> ImportResult:
        """See :meth:`~graphmem.client.Memory.import_`."""
        plan = self._core.import_(records, ns=ns, batch_size=batch_size, progress=progress)
        return await self._run(plan)

    async def drop_namespace(
        self,
        ns: str,
        *,
        confirm: bool = False,
        dry_run: bool = False,
        batch_size: int = DEFAULT_BATCH,
        progress: Callable[[int], object] | None = None,
    ) -> DropResult:
        """See :meth:`~graphmem.client.Memory.drop_namespace`."""
        plan = self._core.drop_namespace(
            ns, confirm=confirm, dry_run=dry_run, batch_size=batch_size, progress=progress
        )
        return await self._run(plan)
