"""The REST calls of the other flows: erasure and its verification, review flags,
consolidation and undo, the audits, and the namespaces (listing, stats, export, import, drop).
No I/O: each method returns a :class:`~graphmem.remote.call.Call`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

from graphmem.core.checks import checked_integer
from graphmem.errors import ClientUsageError, ConfirmationRequiredError, InvalidInputError
from graphmem.models import NamespaceStats
from graphmem.models.audit import Beliefs, ContradictionRecord, Diff, Explanation, Timeline
from graphmem.models.consolidation import ConsolidationResult, ConsolidationRunRecord, UndoResult
from graphmem.models.erasure import ForgetResult, ForgetVerification, ReviewFlag
from graphmem.models.namespaces import DropResult, ImportResult, NamespaceSummary
from graphmem.remote.call import (
    Call,
    CallsBase,
    checked_progress,
    export_record,
    given,
    id_list,
    jsonable,
    model,
    models,
    one_id,
)

if TYPE_CHECKING:
    from graphmem.core.forget.plan import ForgetOptions

Time = datetime | str

#: Nodes per page of an export and records per batch of an import (the library's defaults; the
#: server pages and batches with its own).
DEFAULT_PAGE = 500
#: Nodes deleted per transaction by a drop (the library's default).
DEFAULT_BATCH = 1000
#: The largest page or batch the library takes.
MAX_PAGE = 10_000


def export_records(body: bytes) -> list[dict[str, Any]]:
    """A whole export answer (JSON lines) as its records."""
    lines = body.decode("utf-8").splitlines()
    found = (export_record(line, n) for n, line in enumerate(lines, 1))
    return [record for record in found if record is not None]


def jsonl(records: Iterable[Mapping[str, Any]]) -> tuple[bytes, int]:
    """Records as the JSON lines an import reads, and how many there are."""
    lines = []
    for number, record in enumerate(records, 1):
        try:
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"record {number} is not JSON data: {exc}") from None
    return "".join(lines).encode(), len(lines)


class AdminCalls(CallsBase):
    """The calls of erasure, review, consolidation, the audits and the namespaces."""

    # --- erasure and review ------------------------------------------------------------------
    def forget(
        self,
        ids: str | Sequence[str] | None,
        *,
        reason: str,
        ns: str | None,
        **options: Unpack[ForgetOptions],
    ) -> Call[ForgetResult]:
        given_options: dict[str, Any] = dict(options)
        progress = checked_progress(given_options.pop("progress", None), "a number of nodes")
        if given_options.pop("actor", None) is not None:
            raise ClientUsageError(
                "actor cannot be chosen through graphmem serve: the server records the name "
                "of the API key as the actor of every change"
            )
        dry_run = given_options.pop("dry_run", False)
        if not isinstance(dry_run, bool):
            raise InvalidInputError(f"dry_run must be True or False, got {dry_run!r}")
        body = {
            "reason": reason,
            **given("ids", id_list("ids", ids)),
            **jsonable(given_options, "options"),
            # The library erases unless dry_run; the server only when confirmed.
            "confirm": not dry_run,
        }
        return Call(
            "POST",
            self.path(ns, "forget"),
            model(ForgetResult),
            json=body,
            progress=progress,
            report=lambda r: (r.erased,) if r.erased and not r.dry_run else None,
        )

    def verify_forgotten(
        self, target: str, *, text: str | None, ns: str | None
    ) -> Call[ForgetVerification]:
        body = {"target": target, **given("text", text)}
        return Call("POST", self.path(ns, "forget", "verify"), model(ForgetVerification), json=body)

    def review(
        self, *, fact_id: str | None, open_only: bool, limit: int, ns: str | None
    ) -> Call[list[ReviewFlag]]:
        params = {"fact_id": fact_id, "open_only": open_only, "limit": limit}
        return Call("GET", self.path(ns, "review"), models(ReviewFlag), params=params)

    def confirm(self, id: str, *, reason: str | None, ns: str | None) -> Call[list[ReviewFlag]]:
        path = self.path(ns, "review", one_id("id", id), "confirm")
        return Call("POST", path, models(ReviewFlag), json=given("reason", reason))

    # --- consolidation -----------------------------------------------------------------------
    def consolidate(
        self,
        *,
        ns: str | None,
        force: bool,
        dry_run: bool,
        progress: Callable[[int, int], object] | None,
        tiers: bool | None,
        summaries: bool | None,
    ) -> Call[ConsolidationResult]:
        if not isinstance(dry_run, bool):
            raise InvalidInputError(f"dry_run must be True or False, got {dry_run!r}")
        given = {"tiers": tiers, "summaries": summaries}
        options = {name: value for name, value in given.items() if value is not None}
        return Call(
            "POST",
            self.path(ns, "consolidate"),
            model(ConsolidationResult),
            # The library writes unless dry_run; the server only when confirmed.
            json={"force": force, "confirm": not dry_run, **options},
            progress=checked_progress(progress, "the clusters done and the clusters in all"),
            report=lambda r: (r.clusters, r.clusters) if r.clusters else None,
        )

    def undo(self, run_id: str, *, ns: str | None) -> Call[UndoResult]:
        path = self.path(ns, "consolidation", "runs", one_id("run id", run_id), "undo")
        return Call("POST", path, model(UndoResult))

    def consolidation_runs(
        self, *, ns: str | None, ids: Sequence[str] | None, limit: int
    ) -> Call[list[ConsolidationRunRecord]]:
        params = {"limit": limit, "ids": id_list("run id", ids)}
        path = self.path(ns, "consolidation", "runs")
        return Call("GET", path, models(ConsolidationRunRecord), params=params)

    # --- audits ------------------------------------------------------------------------------
    def audit_beliefs(
        self, as_of: Time | None, *, query: str | None, limit: int, ns: str | None
    ) -> Call[Beliefs]:
        params = {**given("as_of", as_of), "query": query, "limit": limit}
        return Call("GET", self.path(ns, "audit", "beliefs"), model(Beliefs), params=params)

    def audit_truths(
        self,
        valid_at: Time,
        *,
        as_of: Time | None,
        query: str | None,
        limit: int,
        ns: str | None,
    ) -> Call[Beliefs]:
        params = {
            **given("valid_at", valid_at),
            **given("as_of", as_of),
            "query": query,
            "limit": limit,
        }
        return Call("GET", self.path(ns, "audit", "truths"), model(Beliefs), params=params)

    def audit_diff(self, since: Time, until: Time | None, *, ns: str | None) -> Call[Diff]:
        params = {**given("since", since), **given("until", until)}
        return Call("GET", self.path(ns, "audit", "diff"), model(Diff), params=params)

    def audit_timeline(self, id: str, *, ns: str | None) -> Call[Timeline]:
        path = self.path(ns, "audit", "timeline", one_id("id", id))
        return Call("GET", path, model(Timeline))

    def audit_contradictions(
        self, *, open_only: bool, limit: int, ns: str | None
    ) -> Call[list[ContradictionRecord]]:
        params = {"open_only": open_only, "limit": limit}
        path = self.path(ns, "audit", "contradictions")
        return Call("GET", path, models(ContradictionRecord), params=params)

    def audit_explain(self, id: str, *, ns: str | None) -> Call[Explanation]:
        path = self.path(ns, "audit", "explain", one_id("id", id))
        return Call("GET", path, model(Explanation))

    # --- namespaces --------------------------------------------------------------------------
    def namespaces(self) -> Call[list[NamespaceSummary]]:
        return Call("GET", "/v1/namespaces", models(NamespaceSummary))

    def stats(self, *, ns: str | None) -> Call[NamespaceStats]:
        return Call("GET", self.path(ns), model(NamespaceStats))

    def export(self, ns: str | None, *, page_size: int) -> Call[list[dict[str, Any]]]:
        """The export's JSON lines; the clients read them line by line as they come."""
        checked_integer("page_size", page_size, 1, MAX_PAGE)
        return Call("GET", self.path(ns, "export"), export_records)

    def import_(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        ns: str | None,
        batch_size: int,
        progress: Callable[[int], object] | None,
    ) -> Call[ImportResult]:
        checked_integer("batch_size", batch_size, 1, MAX_PAGE)
        progress = checked_progress(progress, "a count")
        path = self.path(ns, "import")
        content, count = jsonl(records)
        return Call(
            "POST",
            path,
            model(ImportResult),
            content=content,
            progress=progress,
            report=lambda _: (count,) if count else None,
        )

    def drop_namespace(
        self,
        ns: str,
        *,
        confirm: bool,
        dry_run: bool,
        batch_size: int,
        progress: Callable[[int], object] | None,
    ) -> Call[DropResult]:
        checked_integer("batch_size", batch_size, 1, MAX_PAGE)
        progress = checked_progress(progress, "a count")
        if confirm is not True and dry_run is not True:
            raise ConfirmationRequiredError(
                f"dropping namespace {ns!r} deletes every node of it for good, tombstones and "
                "consolidation records included: pass confirm=True (see what would go with "
                "dry_run=True)"
            )
        return Call(
            "POST",
            self.path(ns, "drop"),
            model(DropResult),
            json={"confirm": confirm, "dry_run": dry_run},
            progress=progress,
            report=lambda r: (r.removed,) if r.removed and not r.dry_run else None,
        )


__all__ = ["DEFAULT_BATCH", "DEFAULT_PAGE", "MAX_PAGE", "AdminCalls", "export_records", "jsonl"]
