"""The namespaces a database holds, with their counts: the rows of ``ns_list`` and
``ns_contents`` read into :class:`~graphmem.models.namespaces.NamespaceSummary`, and the names
of the staging namespaces an import writes into before it makes its data visible."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from graphmem.models import FactStatus
from graphmem.models.fields import native_time
from graphmem.models.namespaces import NamespaceSummary

#: The start of a staging namespace's name: ``~import:<namespace>:<token>``. No namespace a
#: caller may name starts with ``~``, and every query names the namespace it reads, so no
#: reader sees an import before it is made visible.
STAGE_PREFIX = "~import:"
_TOKEN = re.compile(r"[0-9a-f]{32}")

#: What each count of ``ns_contents`` counts, by the label it counts.
LABEL_COUNTS = {
    "Episode": ("episodes",),
    "Tombstone": ("forgotten_facts", "forgotten_episodes"),
    "ConsolidationRun": ("runs",),
    "ConsolidationState": ("state",),
    "ConsolidationRecord": ("records",),
    "ConsolidationChange": ("changes",),
}


def stage_prefix(ns: str) -> str:
    return f"{STAGE_PREFIX}{ns}:"


def stage_name(ns: str, token: str) -> str:
    """The staging namespace of an import into ``ns`` (``token``: 32 hex digits)."""
    return f"{stage_prefix(ns)}{token}"


def stage_target(name: str) -> str | None:
    """The namespace the staging namespace ``name`` imports into (None for any other name)."""
    if not name.startswith(STAGE_PREFIX):
        return None
    target, _, token = name[len(STAGE_PREFIX) :].rpartition(":")
    return target if target and _TOKEN.fullmatch(token) else None


def counted(pairs: Iterable[list[Any]]) -> dict[str, int]:
    """The ``[metric, count]`` pairs of a listing row as a mapping (facts by status as
    ``facts:<status>``)."""
    return {str(metric): int(n) for metric, n in pairs if n}


def held(counts: Mapping[str, int]) -> dict[str, int]:
    """How many nodes of each label a namespace's counts (``ns_contents``) say it holds; the
    labels it holds none of are left out."""
    nodes = {"Fact": sum(n for m, n in counts.items() if m.startswith("facts:"))}
    for label, metrics in LABEL_COUNTS.items():
        nodes[label] = sum(counts.get(m, 0) for m in metrics)
    return {label: n for label, n in nodes.items() if n}


def summary(ns: str, counts: Mapping[str, int], last_write: Any) -> NamespaceSummary:
    by_status = dict.fromkeys(get_args(FactStatus), 0)
    by_status.update({m.partition(":")[2]: n for m, n in counts.items() if m.startswith("facts:")})
    return NamespaceSummary(
        ns=ns,
        facts=sum(by_status.values()),
        facts_believed=by_status.get("active", 0),
        facts_by_status=by_status,
        episodes=counts.get("episodes", 0),
        forgotten_facts=counts.get("forgotten_facts", 0),
        forgotten_episodes=counts.get("forgotten_episodes", 0),
        consolidation_runs=counts.get("runs", 0),
        last_write_at=native_time(last_write),
    )


def summaries(rows: Iterable[Mapping[str, Any]]) -> list[NamespaceSummary]:
    """The rows of ``ns_list`` as one summary per namespace, by name; a staging namespace is
    not listed, its nodes are counted as its target's ``import_pending``."""
    found: dict[str, NamespaceSummary] = {}
    pending: dict[str, int] = {}
    for row in rows:
        counts = counted(row["counts"])
        target = stage_target(row["ns"])
        if target is not None:
            pending[target] = pending.get(target, 0) + sum(counts.values())
        elif isinstance(row["ns"], str):
            found[row["ns"]] = summary(row["ns"], counts, row["last_write"])
    for target, staged in pending.items():
        base = found.get(target) or NamespaceSummary(ns=target)
        found[target] = base.model_copy(update={"import_pending": staged})
    return [found[ns] for ns in sorted(found)]
