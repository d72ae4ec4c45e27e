"""Review flags: the facts to look at again because something they rested on changed.

A flag is a ``FLAGGED_BY`` relationship from the flagged fact (or episode) to the cause, made
in the transaction of the change: a fact forgotten, superseded, merged or retracted flags the
believed facts that reference it or were derived with it from the same message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphmem.core.plans import Run, Work
from graphmem.store.cypher import query


def flag_changed(
    ns: str,
    event: str,
    actor: str,
    changed: Sequence[Mapping[str, Any]],
    exclude: Sequence[str] = (),
    *,
    create: bool = True,
    at: Any = None,
) -> Work[list[dict[str, str]]]:
    """Flags what rested on each of ``changed`` (``id``, optional ``by`` and ``reason``),
    which ``event`` just changed in this transaction, and closes their own open flags. Returns
    the flags made (``flagged``, ``cause`` and ``relation``); with ``create`` false it only
    closes. The flags are made and closed at ``at`` where the change has one time for all
    it writes (an erasure), else at the statement's time."""
    if not changed:
        return []
    rows = [{"id": c["id"], "by": c.get("by"), "reason": c.get("reason")} for c in changed]
    params = {
        "ns": ns,
        "event": event,
        "actor": actor,
        "rows": rows,
        "exclude": list(exclude),
        "create": create,
        "at": at,
    }
    (out,) = yield Run(query("review_flag"), params)
    flags: list[dict[str, str]] = out["flags"]
    return flags
