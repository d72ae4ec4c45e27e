"""The namespace operations the clients drive: list every namespace, export one, import one
into an empty namespace, drop one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from graphmem.core.base import CoreBase
from graphmem.core.checks import checked_flag, checked_integer, namespace
from graphmem.core.namespaces.document import in_label_order
from graphmem.core.namespaces.drop import LOCK_KINDS, drop_batches, sweep_stages
from graphmem.core.namespaces.export import NamespaceExport
from graphmem.core.namespaces.importer import (
    check_embedder,
    first_record,
    new_staging,
    refuse_if_held,
    remove_stale,
    run_import,
)
from graphmem.core.namespaces.listing import counted, held, stage_prefix, stage_target, summaries
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work, single
from graphmem.errors import ConfirmationRequiredError, InvalidInputError
from graphmem.models.namespaces import (
    DEFAULT_PAGE,
    DROP_BATCH,
    MAX_PAGE,
    DropResult,
    ImportResult,
    NamespaceSummary,
)
from graphmem.store.cypher import query


def _progress(progress: Any) -> Callable[[int], object] | None:
    if progress is not None and not callable(progress):
        raise InvalidInputError("progress must be a callable taking a count, or None")
    return progress  # type: ignore[no-any-return]


class NamespacePlans(CoreBase):
    def namespaces(self) -> Plan[list[NamespaceSummary]]:
        rows: Rows = yield Transaction("read", lambda: single(Run(query("ns_list"), {})))
        return summaries(rows)

    def export(self, ns: str | None, *, page_size: int = DEFAULT_PAGE) -> NamespaceExport:
        """The pages of an export of ``ns`` (checked now; nothing is read until the first)."""
        return NamespaceExport(
            self._ns(ns),
            checked_integer("page_size", page_size, 1, MAX_PAGE),
            guard=self._guard,
            embedder=(self.model_id, self.dimension),
        )

    def import_(
        self,
        records: Iterable[Any],
        *,
        ns: str | None,
        batch_size: int = DEFAULT_PAGE,
        progress: Callable[[int], object] | None = None,
    ) -> Plan[ImportResult]:
        ns = self._ns(ns)
        batch = checked_integer("batch_size", batch_size, 1, MAX_PAGE)
        report = _progress(progress)
        try:
            given = iter(records)
        except TypeError:
            raise InvalidInputError("records must be an iterable of export records") from None
        header = first_record(given)
        check_embedder(header, self.model_id, self.dimension)
        rows: Rows = yield Transaction(
            "read", lambda: single(Run(query("ns_contents"), {"ns": ns}))
        )
        refuse_if_held(ns, rows[0])
        stale = yield from remove_stale(ns, batch)
        result = yield from run_import(
            new_staging(ns, header, batch, self.dimension, report), given, self._guard
        )
        return result.model_copy(update={"stale_removed": stale})

    def drop_namespace(
        self,
        ns: str,
        *,
        confirm: bool = False,
        dry_run: bool = False,
        batch_size: int = DROP_BATCH,
        progress: Callable[[int], object] | None = None,
    ) -> Plan[DropResult]:
        ns = namespace(ns, None)
        dry_run = checked_flag("dry_run", dry_run)
        batch = checked_integer("batch_size", batch_size, 1, MAX_PAGE)
        report = _progress(progress)
        if checked_flag("confirm", confirm) is not True and not dry_run:
            raise ConfirmationRequiredError(
                f"dropping namespace {ns!r} deletes every node of it for good, tombstones and "
                "consolidation records included: pass confirm=True (see what would go with "
                "dry_run=True)"
            )

        def survey() -> Work[tuple[dict[str, int], dict[str, int]]]:
            (contents,) = yield Run(query("ns_contents"), {"ns": ns})
            stages = yield Run(query("import_stages"), {"prefix": stage_prefix(ns)})
            staged: dict[str, int] = {}
            for row in stages:
                if stage_target(row["stage"]) == ns:
                    (found,) = yield Run(query("ns_contents"), {"ns": row["stage"]})
                    staged[row["stage"]] = sum(held(counted(found["counts"])).values())
            return held(counted(contents["counts"])), staged

        nodes, staged = yield Transaction("read", survey)
        if dry_run:
            return DropResult(
                ns=ns, dry_run=True, nodes=in_label_order(nodes), staged=sum(staged.values())
            )
        removed, batches, cleared = Counter[str](), 0, 0
        for stage in staged:
            deleted, used = yield from drop_batches(stage, lock=ns, batch=batch)
            cleared, batches = cleared + sum(deleted.values()), batches + used
        cleared += yield from sweep_stages(ns, batch=batch)
        deleted, used = yield from drop_batches(ns, lock=ns, batch=batch, progress=report)
        removed.update(deleted)
        params = {"ns": ns, "kinds": list(LOCK_KINDS)}
        locks: Rows = yield Transaction(
            "write", lambda: single(Run(query("ns_drop_locks"), params))
        )
        return DropResult(
            ns=ns,
            nodes=in_label_order(removed),
            # The import lock is the one every batch took, made by this drop if need be.
            locks=sum(row["deleted"] for row in locks if row["kind"] != "import"),
            staged=cleared,
            batches=batches + used + 1,
        )
