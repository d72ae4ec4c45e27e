"""The tier pass of a consolidation run: every believed fact's importance score at the run's
time decides its tier, and each fact whose tier changes is promoted or demoted.

Hot: the best scores at or above ``hot_score``, at most ``hot_max_facts`` of them and
``hot_max_tokens`` of text (pinned facts are hot anyway and are not moved). Cold: a score
below ``cold_score``. Warm: the rest. Each move is an operation of the run (``PROMOTE`` or
``DEMOTE``, cluster 0), its fact's earlier tier kept on a :ConsolidationChange so that undo
gives it back.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from graphmem.core.consolidate.progress import Outcome, Records, heartbeat
from graphmem.core.importance import ImportanceConfig, importance_score
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work
from graphmem.models import native_time
from graphmem.models.consolidation import AppliedOperation, Tier
from graphmem.store.cypher import query

#: The cluster number of the tier pass's operations and changes.
TIER_CLUSTER = 0
_RANK: dict[str, int] = {"cold": 0, "warm": 1, "hot": 2}
_TOKENS = re.compile(r"\w+|[^\w\s]")


def rough_tokens(text: str) -> int:
    """Words and punctuation marks in ``text``: close to a BPE or WordPiece count."""
    return len(_TOKENS.findall(text))


def tier_moves(
    rows: Iterable[Mapping[str, Any]], now: datetime, config: ImportanceConfig
) -> list[AppliedOperation]:
    """The moves that give each fact of ``rows`` (tiers_read: id, text, importance,
    recorded_at, last_accessed_at, access_count, tier) the tier its score asks for, hot
    facts chosen best score first (then newest, then by id) within the caps."""
    scored = []
    for row in rows:
        score = importance_score(
            row["importance"],
            native_time(row["recorded_at"]),
            native_time(row["last_accessed_at"]) if row["last_accessed_at"] else None,
            row["access_count"],
            now,
            config,
        )
        scored.append((score, row))
    hot: dict[str, str] = {}
    tokens = 0
    ranked = sorted(
        (item for item in scored if item[0] >= config.hot_score),
        key=lambda item: (-item[0], item[1]["id"]),
    )
    for _score, row in ranked:
        if len(hot) >= config.hot_max_facts:
            hot[row["id"]] = f"the hot tier holds {config.hot_max_facts} facts with better scores"
            continue
        size = rough_tokens(row["text"] or "")
        if tokens + size > config.hot_max_tokens:
            hot[row["id"]] = (
                f"the hot tier's {config.hot_max_tokens} tokens are taken by better scores"
            )
            continue
        hot[row["id"]] = ""
        tokens += size
    moves = []
    for score, row in scored:
        before: Tier = row["tier"] or "warm"
        after, why = _wanted(score, hot.get(row["id"]), config)
        if after == before:
            continue
        moves.append(
            AppliedOperation(
                op="PROMOTE" if _RANK[after] > _RANK[before] else "DEMOTE",
                facts=(row["id"],),
                numbers=(),
                reason=why,
                cluster=TIER_CLUSTER,
                tier=after,
                before=before,
                score=score,
            )
        )
    return moves


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
        rows: Rows = yield Run(query("tiers_read"), {"ns": ns})
        now = native_time(rows[0]["now"]) if rows else datetime.now(UTC)
        moves = tier_moves(rows, now, config)
        if moves and not dry_run:
            yield from apply_moves(ns, run_id, moves)
            record = Records()
            record.moved(moves)
            yield Run(query("consolidate_record"), record.params(ns, run_id, None))
        return moves

    moves = yield Transaction("read" if dry_run else "write", work)
    outcome.applied += moves
    outcome.timings["tiers"] = round(time.perf_counter() - clock, 4)
