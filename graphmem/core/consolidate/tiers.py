"""The tier pass of a consolidation run: every believed fact's importance score at the run's
time decides its tier, and each fact whose tier changes is promoted or demoted.

Hot: the best scores at or above ``hot_score``, at most ``hot_max_facts`` of them and
``hot_max_tokens`` of text (pinned facts are hot anyway and are not moved). Cold: a score
below ``cold_score``. Warm: the rest. Each move is an operation of the run (``PROMOTE`` or
``DEMOTE``, cluster 0), its fact's earlier tier kept on a :ConsolidationChange so that undo
gives it back.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from graphmem._text import rough_tokens
from graphmem.core.consolidate.progress import Outcome, Records, heartbeat
from graphmem.core.importance import ImportanceConfig, idle_score
from graphmem.core.plans import Plan, Run, Transaction, Work
from graphmem.models.consolidation import AppliedOperation, Tier
from graphmem.store.cypher import query

#: The cluster number of the tier pass's operations and changes.
TIER_CLUSTER = 0
_RANK: dict[str, int] = {"cold": 0, "warm": 1, "hot": 2}
_DAY_MS = 86_400_000.0


def tier_moves(
    scored: Sequence[Scored], texts: Mapping[str, str], config: ImportanceConfig
) -> list[AppliedOperation]:
    """The moves that give each fact of ``scored`` (:func:`scores`) the tier its score asks
    for, hot facts chosen best score first (then by id) within the caps (``texts``: the text
    of each fact that scores for the hot tier, see :func:`hot_candidates`)."""
    hot: dict[str, str] = {}
    tokens = 0
    ranked = sorted(
        (item for item in scored if item[0] >= config.hot_score), key=lambda i: (-i[0], i[1])
    )
    for _score, fact_id, _tier in ranked:
        if len(hot) >= config.hot_max_facts:
            hot[fact_id] = f"the hot tier holds {config.hot_max_facts} facts with better scores"
            continue
        size = rough_tokens(texts.get(fact_id) or "")
        if tokens + size > config.hot_max_tokens:
            hot[fact_id] = (
                f"the hot tier's {config.hot_max_tokens} tokens are taken by better scores"
            )
            continue
        hot[fact_id] = ""
        tokens += size
    moves = []
    for score, fact_id, tier in scored:
        before: Tier = tier or "warm"
        after, why = _wanted(score, hot.get(fact_id), config)
        if after == before:
            continue
        moves.append(
            # Built from known-good values: thousands of moves skip validation.
            AppliedOperation.model_construct(
                op="PROMOTE" if _RANK[after] > _RANK[before] else "DEMOTE",
                facts=(fact_id,),
                numbers=(),
                reason=why,
                cluster=TIER_CLUSTER,
                tier=after,
                before=before,
                score=score,
                summary_id=None,
                text=None,
            )
        )
    return moves


def hot_candidates(scored: Sequence[Scored], config: ImportanceConfig) -> list[str]:
    """The facts of ``scored`` whose score reaches the hot tier."""
    return [fact_id for score, fact_id, _ in scored if score >= config.hot_score]


#: A fact's score, id and tier (None: warm).
Scored = tuple[float, str, Any]


def scores(row: Mapping[str, Any], config: ImportanceConfig) -> list[Scored]:
    """(score, id, tier) of each fact of tiers_read's lists at the statement's time."""
    now = row["now"]
    return [
        (idle_score(importance[0], (now - used) / _DAY_MS, uses, config), fact_id, tier[0])
        for fact_id, importance, used, uses, tier in zip(
            row["ids"], row["importance"], row["used"], row["uses"], row["tiers"], strict=True
        )
    ]


def _wanted(score: float, hot: str | None, config: ImportanceConfig) -> tuple[Tier, str]:
    """The tier a fact with ``score`` belongs in, and why (``hot``: None below the hot score,
    "" when it made the hot tier, else why it did not)."""
    if hot == "":
        return "hot", f"score {score:.3f} reached the hot tier's {config.hot_score:g}"
    if score < config.cold_score:
        return "cold", f"score {score:.3f} fell below the cold tier's {config.cold_score:g}"
    if hot is not None:
        return "warm", f"score {score:.3f}, but {hot}"
    return "warm", (
        f"score {score:.3f} is between the cold tier's {config.cold_score:g} and the hot "
        f"tier's {config.hot_score:g}"
    )


def apply_moves(ns: str, run_id: str, moves: list[AppliedOperation]) -> Work[int]:
    """Writes ``moves`` in the transaction: each fact's tier set with the run as the one who
    set it, its state before and after kept for undo."""
    rows = [{"id": m.facts[0], "tier": m.tier, "reason": m.reason} for m in moves]
    (done,) = yield Run(query("tiers_apply"), {"ns": ns, "run": run_id, "rows": rows})
    moved: int = done["moved"]
    return moved


def tier_pass(
    ns: str,
    run_id: str,
    config: ImportanceConfig,
    lock_ttl: float,
    dry_run: bool,
    outcome: Outcome,
) -> Plan[None]:
    """The run's tier pass: in one transaction (a read one for a dry run), every believed
    fact scored at the statement's time, the moves applied and recorded on the run."""
    clock = time.perf_counter()

    def work() -> Work[list[AppliedOperation]]:
        if not dry_run:
            yield from heartbeat(ns, run_id, lock_ttl)
        (row,) = yield Run(query("tiers_read"), {"ns": ns}, plain_rows=True)
        scored = scores(row, config)
        candidates = hot_candidates(scored, config)
        texts: dict[str, str] = {}
        if candidates:
            found = yield Run(query("tiers_texts"), {"ns": ns, "ids": candidates})
            texts = {r["id"]: r["text"] for r in found}
        moves = tier_moves(scored, texts, config)
        if moves and not dry_run:
            yield from apply_moves(ns, run_id, moves)
            record = Records()
            record.moved(moves)
            yield Run(query("consolidate_record"), record.params(ns, run_id, None))
        return moves

    moves = yield Transaction("read" if dry_run else "write", work)
    outcome.applied += moves
    outcome.timings["tiers"] = round(time.perf_counter() - clock, 4)
