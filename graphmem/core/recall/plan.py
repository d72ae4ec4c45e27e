"""recall: hybrid search over facts and episodes, as one plan (search, fuse, gate, stamp)."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from graphmem.core.base import CoreBase
from graphmem.core.checks import QUERY_TEXT, checked_value
from graphmem.core.plans import LoadModel, Plan, Transaction, VectorParam, Work
from graphmem.core.recall.ranking import ImportanceWeighing
from graphmem.core.recall.scope import RecallRequest
from graphmem.core.recall.search import RecallReads, assemble, recall_reads, stamp_access
from graphmem.errors import GraphmemError
from graphmem.models import RecallResult, Timing


class RecallPlans(CoreBase):
    def recall(self, text: str, *, ns: str | None, **options: Any) -> Plan[RecallResult]:
        """The plan of ``recall(text, **options)``, options as :class:`RecallOptions` names."""
        began = time.perf_counter()
        ns = self._ns(ns)
        text = self._query(text)
        request = RecallRequest.checked(options, self.config)
        return (yield from self._recall(ns, text, request, began))

    @staticmethod
    def _query(text: str) -> str:
        return checked_value(QUERY_TEXT, "recall query", text)

    def _recall(
        self, ns: str, text: str, request: RecallRequest, began: float
    ) -> Plan[RecallResult]:
        scope, k, cfg = request.scope, request.k, request.config
        loading = time.perf_counter()
        yield LoadModel()  # after every check, and untimed: total_ms leaves it out too
        began += time.perf_counter() - loading
        started = time.perf_counter()
        vector = VectorParam((yield from self._embed((text,)))[0].tolist())
        embed_ms = (time.perf_counter() - started) * 1000

        clock = datetime.now(UTC)
        now = scope.as_of or clock
        weighing = None
        if cfg.importance_weight > 0:
            weighing = ImportanceWeighing(self.importance, clock)
        started = time.perf_counter()
        try:
            reads: RecallReads = yield Transaction(
                "read",
                lambda: recall_reads(
                    ns,
                    text,
                    vector,
                    request,
                    now,
                    check_state=self._check_state,
                    filtered=self.filtered_search,
                    weighing=weighing,
                ),
            )
        except GraphmemError:
            if self.filtered_search:
                # SEARCH names its index when the statement is planned: while a re-embedding
                # has dropped the vector indexes, the search fails before it can read the
                # graph's state, so the state is read on its own to say why.
                yield Transaction("read", self._guard)
            raise
        db_ms = (time.perf_counter() - started) * 1000
        hits = assemble(reads, k, cfg, scope.as_of)
        hint = None
        if not hits and scope.as_of is not None:
            hint = yield from self._as_of_hint(ns, text, vector, request, now)

        stamp_ms = 0.0
        if request.track_access and scope.as_of is None:  # as_of: an audit read
            stamp_ms = yield from stamp_access(
                ns,
                [h.id for h in hits if h.kind == "fact"],
                [h.id for h in hits if h.kind == "episode"],
            )
        return RecallResult(
            query=text,
            ns=ns,
            hits=tuple(hits),
            as_of=scope.as_of,
            valid_at=scope.valid_at,
            candidates=reads.seen,
            gated=reads.gated,
            widened=reads.widened,
            exact_fallback=reads.exact,
            vector_paths=reads.paths,
            hint=hint,
            timing=Timing(
                embed_ms=embed_ms,
                db_ms=db_ms,
                stamp_ms=stamp_ms,
                total_ms=(time.perf_counter() - began) * 1000,
            ),
        )

    def _as_of_hint(
        self, ns: str, text: str, vector: VectorParam, request: RecallRequest, now: datetime
    ) -> Plan[str | None]:
        """For a recall at ``as_of`` that found nothing: what the caller may have meant, when
        the same search finds something without ``as_of``, at valid time ``as_of`` (or at the
        ``valid_at`` given). One more read, only in that case."""
        scope = request.scope
        assert scope.as_of is not None
        at = scope.valid_at or scope.as_of
        other = replace(request, scope=replace(scope, as_of=None, valid_at=at))

        def read() -> Work[RecallReads]:
            return recall_reads(
                ns, text, vector, other, now, self._check_state, filtered=self.filtered_search
            )

        reads: RecallReads = yield Transaction("read", read)
        if not reads.candidates:
            return None
        found = f"{len(reads.candidates)} hit(s)"
        if scope.valid_at is not None:
            return (
                f"nothing was believed at as_of={scope.as_of.isoformat()} (transaction time: "
                f"what memory held then); without as_of, {found} were true at "
                f"valid_at={at.isoformat()} by what is believed now: leave as_of out?"
            )
        return (
            f"nothing was believed at as_of={scope.as_of.isoformat()} (transaction time: what "
            f"memory held then); {found} were true at that time by what is believed now: did "
            f"you mean valid_at={at.isoformat()}?"
        )
