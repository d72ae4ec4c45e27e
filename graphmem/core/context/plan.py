"""The plan of ``context``: pinned facts, then what recall finds, within the budget."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import tzinfo
from typing import Any

from graphmem.core.checks import checked_integer
from graphmem.core.context.block import build_context, time_zone
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work
from graphmem.core.recall.plan import RecallPlans
from graphmem.core.recall.scope import RecallRequest, listed_once
from graphmem.core.recall.search import hit_provenance, stamp_access
from graphmem.embed.tokens import TokenCounter
from graphmem.models import MAX_IDS, ContextBlock, Fact, RecallResult
from graphmem.store.cypher import query


class ContextPlans(RecallPlans):
    def context(
        self,
        text: str,
        *,
        ns: str | None,
        budget_tokens: int,
        counter: TokenCounter,
        k: int = 20,
        pinned_limit: int = 50,
        timezone: str | tzinfo | None = None,
        **recall_options: Any,
    ) -> Plan[ContextBlock]:
        ns = self._ns(ns)
        budget_tokens = checked_integer("budget_tokens", budget_tokens, 1)
        pinned_limit = checked_integer("pinned_limit", pinned_limit, 0, MAX_IDS)
        zone = time_zone(timezone)
        # Only the lines the block shows count as accessed, so recall stamps nothing itself.
        # kinds and tags are read twice (by recall, then for the pinned facts): an iterator,
        # which recall takes, is read once here.
        began = time.perf_counter()
        options = listed_once({**recall_options, "k": k})
        request = RecallRequest.checked(
            options,
            self.config,
            caller="context",
            own="budget_tokens, k, pinned_limit and timezone",
        )
        recall = replace(request, track_access=False)
        result: RecallResult = yield from self._recall(ns, self._query(text), recall, began)
        # Pinned facts open the block whatever the query, but within the call's scope: its
        # kinds, tags and recording times, believed (never retired) at the time asked about.
        pinned_scope = request.scope.current()
        hit_facts = [h.id for h in result.hits if h.kind == "fact"]

        def read_pinned() -> Work[tuple[dict[str, Any], set[str]]]:
            (row,) = yield Run(
                query("pinned_facts"),
                {"ns": ns, "limit": pinned_limit, **pinned_scope.fact_params()},
            )
            # Recall read in a transaction of its own: a fact it found may have been replaced
            # since, and the fact that replaced it, pinned in the same write, be read here.
            shown = [fact["id"] for fact in row["facts"]] + hit_facts
            replaced: Rows = []
            if len(shown) > 1:
                replaced = yield Run(query("facts_replaced"), {"ns": ns, "ids": shown})
            return row, {r["id"] for r in replaced}

        row: dict[str, Any] = {"facts": [], "provenance": [], "beyond": []}
        replaced: set[str] = set()
        if "fact" in pinned_scope.kinds:
            row, replaced = yield Transaction("read", read_pinned)
        pinned = [Fact.model_validate(fact) for fact in row["facts"]]
        sources = {
            fact.id: hit_provenance(rows, None)
            for fact, rows in zip(pinned, row["provenance"], strict=True)
        }
        if result.as_of is not None:
            pinned = [fact.as_believed_at(result.as_of) for fact in pinned]
        # A line shows a fact as believed only while no line shows the fact that replaced it.
        pinned = [f for f in pinned if not (f.id in replaced and f.believed)]
        hits = [h for h in result.hits if not (h.id in replaced and h.fact and h.fact.believed)]
        # Valid times are judged at the time asked about: valid_at, else as_of, else now.
        at = result.valid_at or result.as_of
        block = build_context(pinned, hits, budget_tokens, counter, at, zone, sources)
        # Pinned facts past pinned_limit are left out too, unless recall found them.
        unseen = set(row["beyond"]) - {h.id for h in result.hits}
        if unseen:
            block = block.model_copy(update={"omitted": block.omitted + len(unseen)})
        if request.track_access and result.as_of is None:
            yield from stamp_access(ns, list(block.fact_ids), list(block.episode_ids))
        return block
