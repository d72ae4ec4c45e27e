"""The consolidation records of a run that showed an erased fact, without its words.

A record keeps the structure of what the run did (clusters, operations, fact ids and numbers,
LLM usage) and loses every text that could quote an erased fact: the proposer's raw answer,
the reasons of its operations, the rejections and the review candidates' texts. The whole
record is scrubbed, since an answer may quote any fact of its cluster anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: What replaces a text an erasure removed.
ERASED = "[erased]"


def _loads(items: Sequence[str] | None) -> list[dict[str, Any]]:
    out = []
    for item in items or ():
        try:
            value = json.loads(item)
        except (TypeError, ValueError):
            value = {}
        out.append(value if isinstance(value, dict) else {})
    return out


def _plan(plan: Mapping[str, Any]) -> str:
    return json.dumps(
        {"cluster": plan.get("cluster"), "raw": ERASED, "usage": plan.get("usage", {})}
    )


def _operation(op: Mapping[str, Any]) -> str:
    kept = {k: op[k] for k in ("op", "facts", "numbers", "cluster") if k in op}
    if not all(isinstance(n, int) for n in kept.get("numbers", ())):
        kept["numbers"] = []  # a malformed answer's numbers may be any text it gave
    if "op" in kept and not isinstance(kept["op"], str | None):
        kept["op"] = None
    extra = {"reason": ERASED}
    if "rejection" in op:
        extra["rejection"] = ERASED
    return json.dumps({**kept, **extra})


def _review(candidate: Mapping[str, Any]) -> str:
    return json.dumps(
        {
            "facts": candidate.get("facts", []),
            "texts": [ERASED, ERASED],
            "similarity": candidate.get("similarity"),
            "reason": ERASED,
        }
    )


def scrubbed(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` (its ``plans``, ``applied``, ``rejected`` and ``review`` JSON lists, and any
    other keys, kept) without the texts it held."""
    return {
        **record,
        "plans": [_plan(p) for p in _loads(record["plans"])],
        "applied": [_operation(o) for o in _loads(record["applied"])],
        "rejected": [_operation(o) for o in _loads(record["rejected"])],
        "review": [_review(c) for c in _loads(record["review"])],
    }
