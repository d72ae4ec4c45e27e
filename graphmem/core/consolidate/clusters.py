"""Grouping new facts with their believed neighbours into numbered clusters of bounded size."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from graphmem.models.consolidation import Cluster, ClusterEdge, ClusterFact


def group(
    new_ids: Sequence[str], pairs: Iterable[tuple[str, str, float]], max_size: int
) -> list[list[str]]:
    """Clusters of at least two facts: the pairs joined most similar first, as long as the
    joined cluster stays within ``max_size``; ordered by their earliest new fact, each in the
    order its facts were first seen. A pair that would overflow is left out of this run."""
    parent: dict[str, str] = {}
    size: dict[str, int] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        size.setdefault(x, 1)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    order = {fact_id: i for i, fact_id in enumerate(new_ids)}
    seen: dict[str, int] = {}
    for a, b, _ in sorted(pairs, key=lambda p: -p[2]):
        ra, rb = root(a), root(b)
        seen.setdefault(a, len(seen))
        seen.setdefault(b, len(seen))
        if ra != rb and size[ra] + size[rb] <= max_size:
            parent[rb] = ra
            size[ra] += size[rb]
    members: dict[str, list[str]] = {}
    for fact_id in sorted(parent, key=lambda f: seen.get(f, 0)):
        members.setdefault(root(fact_id), []).append(fact_id)
    clusters = [m for m in members.values() if len(m) > 1]
    first = len(order)
    clusters.sort(key=lambda m: min(order.get(f, first) for f in m))
    return clusters


class Numbering:
    """Numbers the clusters of one run: ``rows`` (id to fact properties), the new facts'
    ids, the edges among the facts and the similar pairs, each indexed once by fact so that
    numbering a cluster reads only its own."""

    def __init__(
        self,
        rows: Mapping[str, Mapping[str, Any]],
        new_ids: set[str],
        edges: Iterable[Mapping[str, Any]],
        similar: Iterable[tuple[str, str, float]],
    ) -> None:
        self.rows, self.new_ids = rows, new_ids
        self.edges: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
        for i, e in enumerate(edges):
            self.edges.setdefault(e["source"], []).append((i, e))
        self.similar: dict[str, list[tuple[str, str, float]]] = {}
        for pair in similar:
            self.similar.setdefault(pair[0], []).append(pair)

    def cluster(self, index: int, member_ids: Sequence[str]) -> Cluster:
        """The cluster as a proposer sees it: its facts numbered from 1 in recording order,
        their edges (in the order given) and similar pairs by number."""
        rows = {f: _with_times(self.rows[f]) for f in member_ids}
        ordered = sorted(member_ids, key=lambda f: (_time(rows[f]["recorded_at"]), f))
        numbers = {fact_id: i + 1 for i, fact_id in enumerate(ordered)}
        facts = tuple(
            ClusterFact.model_validate(
                {
                    **{k: rows[f].get(k) for k in ClusterFact.model_fields if k in rows[f]},
                    "number": numbers[f],
                    "new": f in self.new_ids,
                }
            )
            for f in ordered
        )
        among = sorted(
            (i, e) for f in numbers for i, e in self.edges.get(f, ()) if e["target"] in numbers
        )
        cluster_edges = tuple(
            ClusterEdge(
                type=e["type"],
                source=numbers[e["source"]],
                target=numbers[e["target"]],
                open=bool(e.get("open")),
            )
            for _, e in among
        )
        pairs = tuple(
            (min(numbers[a], numbers[b]), max(numbers[a], numbers[b]), round(float(s), 4))
            for f in numbers
            for a, b, s in self.similar.get(f, ())
            if b in numbers
        )
        return Cluster(
            index=index, facts=facts, edges=cluster_edges, similar=tuple(sorted(set(pairs)))
        )


def number(
    index: int,
    rows: Mapping[str, Mapping[str, Any]],
    member_ids: Sequence[str],
    new_ids: set[str],
    edges: Iterable[Mapping[str, Any]],
    similar: Iterable[tuple[str, str, float]],
) -> Cluster:
    """The cluster as a proposer sees it: its facts (``rows``: id to fact properties) numbered
    from 1 in recording order, their edges and similar pairs by number."""
    return Numbering(rows, new_ids, edges, similar).cluster(index, member_ids)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TIMES = ("recorded_at", "valid_from", "valid_to")


def _stored_time(value: Any) -> Any:
    """A time as consolidate_facts gives it: [seconds since the epoch, nanosecond] (see the
    epoch_time fragment) as a UTC datetime cut to microseconds, as the driver's DateTime
    becomes one; anything else as it is."""
    if not isinstance(value, list):
        return value
    seconds, nanosecond = value
    return _EPOCH + timedelta(seconds=seconds, microseconds=nanosecond // 1000)


def _with_times(row: Mapping[str, Any]) -> Mapping[str, Any]:
    if not any(isinstance(row.get(k), list) for k in _TIMES):
        return row
    return {**row, **{k: _stored_time(row[k]) for k in _TIMES if k in row}}


def _time(value: Any) -> datetime:
    native: datetime = value.to_native() if hasattr(value, "to_native") else value
    return native
