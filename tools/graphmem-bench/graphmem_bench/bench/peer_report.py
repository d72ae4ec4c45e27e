"""The report of ``graphmem bench peer graphiti``: its models, top-10 overlap, the latency
ratio, the target and the Markdown table (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from pydantic import BaseModel, Field, computed_field, field_validator

from graphmem.testing import ServerOptions
from graphmem_bench.bench.render import format_count, format_ms, targets_table
from graphmem_bench.bench.report import (
    EmbedderInfo,
    MachineInfo,
    Percentiles,
    ServerInfo,
    TargetResult,
    Throughput,
    check_sizes,
)
from graphmem_bench.markdown import markdown_table

#: graphiti-core's hybrid search p95 must be at least this many times graphmem's recall p95 ...
PEER_P95_RATIO_TARGET = 5.0
#: ... with at least this many facts stored on each side.
PEER_P95_MIN_FACTS = 100_000

PEERS = ("graphiti",)


class PeerOptions(ServerOptions):
    """What to compare, and against which Neo4j."""

    peer: str = "graphiti"
    sizes: tuple[int, ...] = (10_000, 100_000)
    queries: int = Field(default=200, ge=1)
    warmup: int = Field(default=20, ge=0)
    #: Facts written on each side (random vectors, untimed) before the first size.
    warmup_facts: int = Field(default=1_000, ge=0)
    batch_size: int = Field(default=1_000, ge=1, le=10_000)
    k: int = Field(default=10, ge=1, le=100)
    seed: int = 0

    @field_validator("peer")
    @classmethod
    def _check_peer(cls, value: str) -> str:
        if value not in PEERS:
            raise ValueError(f"the peer must be one of {', '.join(PEERS)}, got {value!r}")
        return value

    _check_sizes = field_validator("sizes")(check_sizes)


class SideResult(BaseModel):
    """One system at one size: its writes, its search latency and how often it found the fact
    a query asks about."""

    system: str
    #: Facts the system holds for this size after the writes (counted in the graph).
    stored: int
    write: Throughput
    #: Milliseconds per search, the full client call.
    search_ms: Percentiles
    mean_hits: float
    #: Share of queries whose answering fact was in the top k.
    found_share: float


class PeerSizeResult(BaseModel):
    """Both systems at one size, on the same facts, vectors and queries."""

    size: int
    namespace: str
    group_id: str
    #: graphiti-core entity nodes the facts connect (subjects and topics).
    entities: int
    #: The one embedding pass over the facts (for information; neither write includes it).
    embedding: Throughput
    queries: int
    warmup: int
    k: int
    graphmem: SideResult
    graphiti: SideResult
    #: Mean over queries of the share of graphmem's top k whose edge is in graphiti's top k.
    overlap: float
    #: Queries the mean runs over: those where graphmem returned at least one fact.
    overlap_queries: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def p95_ratio(self) -> float:
        """graphiti-core's search p95 over graphmem's recall p95."""
        return p95_ratio(self.graphiti.search_ms.p95, self.graphmem.search_ms.p95)


class PeerReport(BaseModel):
    """The result of :func:`graphmem_bench.bench.peer_graphiti.run_peer_bench`."""

    graphmem_version: str
    peer_version: str
    started_at: datetime
    finished_at: datetime
    options: PeerOptions
    machine: MachineInfo
    server: ServerInfo
    embedder: EmbedderInfo
    prefix: str
    sizes: list[PeerSizeResult]
    targets: list[TargetResult]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return all(t.status != "fail" for t in self.targets)


# --- measures -------------------------------------------------------------------------------------
def top_k_overlap(
    graphmem_ids: Sequence[str], graphiti_ids: Sequence[str], edge_of: Mapping[str, str]
) -> float | None:
    """The share of graphmem's hits whose graphiti edge (``edge_of``: fact id to edge uuid) is
    among graphiti's hits; None when graphmem returned nothing."""
    if not graphmem_ids:
        return None
    theirs = set(graphiti_ids)
    return sum(edge_of.get(fact_id) in theirs for fact_id in graphmem_ids) / len(graphmem_ids)


def mean_overlap(values: Sequence[float | None]) -> tuple[float, int]:
    """The mean of the defined overlaps, and how many there were."""
    defined = [v for v in values if v is not None]
    return (sum(defined) / len(defined) if defined else 0.0), len(defined)


def p95_ratio(peer_p95: float, graphmem_p95: float) -> float:
    """``peer_p95 / graphmem_p95`` (0 when graphmem's p95 is not positive)."""
    return peer_p95 / graphmem_p95 if graphmem_p95 > 0 else 0.0


def evaluate_peer_targets(sizes: Sequence[PeerSizeResult]) -> list[TargetResult]:
    """graphiti-core's search p95 at least 5 times graphmem's recall p95, from 100,000 facts."""
    return [
        TargetResult.check(
            "graphiti p95 / graphmem p95",
            result.size,
            result.p95_ratio,
            PEER_P95_RATIO_TARGET,
            ">=",
            "ratio",
            min_size=PEER_P95_MIN_FACTS,
        )
        for result in sizes
    ]


# --- markdown -------------------------------------------------------------------------------------
def _search_section(report: PeerReport) -> list[str]:
    """The search latency table: each system at each size."""
    lines = ["", f"## Search latency (ms, k={report.options.k})", ""]
    rows = []
    for r in report.sizes:
        for side in (r.graphmem, r.graphiti):
            first = side is r.graphmem
            p = side.search_ms
            rows.append(
                [
                    format_count(r.size) if first else "",
                    f"{r.queries} after {r.warmup} warm-up" if first else "",
                    side.system,
                    format_ms(p.p50),
                    format_ms(p.p95),
                    format_ms(p.p99),
                    format_ms(p.max),
                    f"{side.found_share:.0%}",
                ]
            )
    lines += markdown_table(
        ["facts", "queries", "system", "p50", "p95", "p99", "max", "answer in top k"],
        "rrlrrrrr",
        rows,
    )
    return lines


def render_peer_markdown(report: PeerReport) -> str:
    """The report as Markdown: set-up, writes, search latency, agreement, target."""
    opts, server, embedder, machine = report.options, report.server, report.embedder, report.machine
    threads = f", torch {machine.torch_threads} threads" if machine.torch_threads else ""
    lines = [
        f"# graphmem vs graphiti-core {report.peer_version} "
        f"({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"- machine: {machine.cpus} CPUs{threads}, {machine.platform}, Python {machine.python}",
        f"- {server.describe()}; both systems in the same database",
        f"- embedder: {embedder.model_id} ({embedder.dimension}-d, {embedder.device}); every "
        "fact and query embedded once, both systems given the same vectors",
        f"- writes in batches of {opts.batch_size:,} facts; untimed warm-up {opts.warmup_facts:,} "
        f"facts per system; seed {opts.seed}; graphmem {report.graphmem_version}",
        "- graphmem: `Memory.remember_many(vectors=...)`, then `Memory.recall(k="
        f"{opts.k})` with the default configuration (access stamps written)",
        "- graphiti-core: `EntityEdge`s between `EntityNode`s saved with "
        "`add_nodes_and_edges_bulk`, then `Graphiti.search_` with `EDGE_HYBRID_SEARCH_RRF` "
        f"(BM25 + cosine, RRF, limit {opts.k}) in the size's group_id",
        "- search times are the full client call; the query vector comes from a lookup on both "
        "sides, so no embedding is timed",
        "",
        "## Writes",
        "",
    ]
    lines += markdown_table(
        [
            "facts",
            "graphmem (facts/s)",
            "graphiti-core (facts/s)",
            "stored: graphmem / graphiti",
            "graphiti entities",
            "embedding once (texts/s)",
        ],
        "rrrrrr",
        [
            [
                format_count(r.size),
                format_count(r.graphmem.write.per_second),
                format_count(r.graphiti.write.per_second),
                f"{format_count(r.graphmem.stored)} / {format_count(r.graphiti.stored)}",
                format_count(r.entities),
                format_count(r.embedding.per_second),
            ]
            for r in report.sizes
        ],
    )
    lines += _search_section(report)
    lines += ["", "## Comparison", ""]
    lines += markdown_table(
        ["facts", "graphiti p95 / graphmem p95", f"mean top-{opts.k} overlap"],
        "rrr",
        [
            [
                format_count(r.size),
                f"{r.p95_ratio:.1f}x",
                f"{r.overlap:.0%} ({r.overlap_queries} queries)",
            ]
            for r in report.sizes
        ],
    )
    lines += [
        "",
        f"Overlap: the share of graphmem's top {opts.k} facts whose graphiti-core edge (the "
        f"same synthetic fact) is in graphiti-core's top {opts.k}, averaged over the queries.",
        "",
        "## Target",
        "",
    ]
    lines += targets_table(report.targets)
    lines.append("")
    if server.kept:
        lines.append(
            f"The namespaces and group_ids `{report.prefix}-*` stay in the configured Neo4j."
        )
    else:
        lines.append("The throwaway Neo4j and its data were deleted after the run.")
    return "\n".join(lines) + "\n"


__all__ = [
    "PEER_P95_MIN_FACTS",
    "PEER_P95_RATIO_TARGET",
    "PeerOptions",
    "PeerReport",
    "PeerSizeResult",
    "SideResult",
    "evaluate_peer_targets",
    "mean_overlap",
    "p95_ratio",
    "render_peer_markdown",
    "top_k_overlap",
]
