"""The plan of ``context``: pinned facts, then what recall finds, within the budget."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from typing import Any

from graphmem.core.checks import checked_flag, checked_integer
from graphmem.core.context.block import IDS_IN_LINES, context_lines, fit_lines, time_zone
from graphmem.core.importance import ImportanceConfig, fact_score
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work, single
from graphmem.core.recall.plan import RecallPlans
from graphmem.core.recall.scope import RecallRequest, listed_once
from graphmem.core.recall.search import hit_provenance, stamp_access
from graphmem.embed.tokens import TokenCounter
from graphmem.models import MAX_IDS, ContextBlock, Fact, Hit, Provenance, RecallResult
from graphmem.store.cypher import query

#: Characters of an id a context block shows where they name it alone (as MCP does).
SHORT_ID = 8


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
        short_ids: bool = True,
        include_cold: bool = False,
        **recall_options: Any,
    ) -> Plan[ContextBlock]:
        ns = self._ns(ns)
        short_ids = checked_flag("short_ids", short_ids)
        include_cold = checked_flag("include_cold", include_cold)
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
            own="budget_tokens, k, pinned_limit, timezone, short_ids and include_cold",
        )
        recall = replace(request, track_access=False)
        result: RecallResult = yield from self._recall(ns, self._query(text), recall, began)
        # Pinned facts open the block whatever the query, but within the call's scope: its
        # kinds, tags and recording times, believed (never retired) at the time asked about.
        pinned_scope = request.scope.current()
        row: dict[str, Any] = {"beyond": []}
        pinned: list[Fact] = []
        sources: dict[str, Provenance] = {}
        replaced: set[str] = set()
        if "fact" in pinned_scope.kinds:
            row, replaced = yield from self._opening(ns, pinned_scope, pinned_limit, result)
            pinned, sources = _opening_facts(row, self.importance)
        if result.as_of is not None:
            pinned = [fact.as_believed_at(result.as_of) for fact in pinned]
        # A line shows a fact as believed only while no line shows the fact that replaced it.
        pinned = [f for f in pinned if not (f.id in replaced and f.believed)]
        hits = [h for h in result.hits if not (h.id in replaced and h.fact and h.fact.believed)]
        if not include_cold:  # faded facts: recall finds them, context leaves them out
            hits = [h for h in hits if not (h.fact is not None and h.fact.tier == "cold")]
        # Valid times are judged at the time asked about: valid_at, else as_of, else now.
        at = result.valid_at or result.as_of
        lines = context_lines(pinned, hits, at, zone, sources)
        short = (yield from self._short_ids(ns, lines)) if short_ids else {}
        block = fit_lines(lines, budget_tokens, counter, zone, short)
        summarised = _summarised(hits)
        if block.omitted and len(summarised) < len(hits):
            # Too tight for every line: a summary stands for its members found with it.
            lines = context_lines(pinned, summarised, at, zone, sources)
            block = fit_lines(lines, budget_tokens, counter, zone, short)
        # Pinned facts past pinned_limit are left out too, unless recall found them.
        unseen = set(row["beyond"]) - {h.id for h in result.hits}
        if unseen:
            block = block.model_copy(update={"omitted": block.omitted + len(unseen)})
        if not block.text and block.warning is None and result.hint is not None:
            block = block.model_copy(update={"warning": result.hint})
        if request.track_access and result.as_of is None:
            yield from stamp_access(ns, list(block.fact_ids), list(block.episode_ids))
        return block

    def _opening(
        self, ns: str, scope: Any, limit: int, result: RecallResult
    ) -> Plan[tuple[dict[str, Any], set[str]]]:
        """The pinned facts and the hot tier (pinned_facts' row) within ``scope``, and which
        of them and of ``result``'s facts were replaced since recall read them."""
        hit_facts = [h.id for h in result.hits if h.kind == "fact"]

        def read() -> Work[tuple[dict[str, Any], set[str]]]:
            (row,) = yield Run(
                query("pinned_facts"), {"ns": ns, "limit": limit, **scope.fact_params()}
            )
            # Recall read in a transaction of its own: a fact it found may have been replaced
            # since, and the fact that replaced it, pinned in the same write, be read here.
            shown = [fact["id"] for fact in row["facts"] + row["hot"]] + hit_facts
            replaced: Rows = []
            if len(shown) > 1:
                replaced = yield Run(query("facts_replaced"), {"ns": ns, "ids": shown})
            return row, {r["id"] for r in replaced}

        opening: tuple[dict[str, Any], set[str]] = yield Transaction("read", read)
        return opening

    def _short_ids(self, ns: str, lines: list[tuple[str, str, str]]) -> Plan[dict[str, str]]:
        """For each id the lines show, its first 8 characters where they start no other id of
        the namespace (what MCP shows; every id argument takes them back)."""
        ids = {found for _, _, line in lines for found in IDS_IN_LINES.findall(line)}
        if not ids:
            return {}
        params = {"ns": ns, "prefixes": sorted({i[:SHORT_ID] for i in ids})}
        rows: Rows = yield Transaction("read", lambda: single(Run(query("id_prefix"), params)))
        unique = {row["prefix"]: row["ids"][0] for row in rows if len(row["ids"]) == 1}
        return {i: i[:SHORT_ID] for i in ids if unique.get(i[:SHORT_ID]) == i}


def _opening_facts(
    row: dict[str, Any], config: ImportanceConfig
) -> tuple[list[Fact], dict[str, Provenance]]:
    """The facts that open a block (pinned_facts' row): the pinned ones, newest first, then
    the hot tier, best importance score first; and the messages each was derived from."""
    pinned = [Fact.model_validate(fact) for fact in row["facts"]]
    hot = [Fact.model_validate(fact) for fact in row["hot"]]
    sources = {
        fact.id: hit_provenance(rows, None)
        for fact, rows in zip(pinned + hot, row["provenance"] + row["hot_provenance"], strict=True)
    }
    now = datetime.now(UTC)
    hot.sort(key=lambda f: -fact_score(f, now, config))
    return pinned + hot, sources


def _summarised(hits: list[Hit]) -> list[Hit]:
    """``hits`` with each summary among them in the place of its first member found, and
    its members left out."""
    summaries = {h.id: h for h in hits if h.fact is not None and h.fact.summarizes}
    covered: dict[str, str] = {}
    for summary in summaries.values():
        assert summary.fact is not None
        for member in summary.fact.summarizes:
            covered.setdefault(member, summary.id)
    out: list[Hit] = []
    placed: set[str] = set()
    for hit in hits:
        stand_in = summaries[covered[hit.id]] if hit.id in covered else hit
        if stand_in.id not in placed:
            placed.add(stand_in.id)
            out.append(stand_in)
    return out
