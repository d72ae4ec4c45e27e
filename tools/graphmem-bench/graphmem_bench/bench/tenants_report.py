"""The multi-tenant benchmark's options, report, targets and Markdown
(:mod:`graphmem_bench.bench.tenants` runs it)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from graphmem.testing import LocalNeo4jVersion, ServerOptions
from graphmem_bench.bench.render import format_count, format_ms, targets_table
from graphmem_bench.bench.report import (
    DB_P95_MIN_FACTS,
    DB_P95_TARGET_MS,
    EmbedderInfo,
    MachineInfo,
    Percentiles,
    ServerInfo,
    TargetResult,
    Throughput,
    per_item_ms,
)
from graphmem_bench.bench.tenants_statements import (
    MODE_LABELS,
    STATEMENT_ALIGN,
    STATEMENT_HEADER,
    STATEMENT_NOTES,
    RecallMode,
    StatementFigures,
)
from graphmem_bench.markdown import markdown_table

if TYPE_CHECKING:
    from graphmem.testing import Vectors

#: The exact ranking's top this many facts ...
EXACT_TOP = 5
#: ... are looked for among recall's first this many hits.
WITHIN = 10


class TenantsOptions(ServerOptions):
    """What the multi-tenant benchmark stores, how many questions it asks, on which Neo4j."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Tenant namespaces, and the facts each holds.
    namespaces: int = Field(default=1_000, ge=1, le=100_000)
    facts: int = Field(default=1_000, ge=1, le=1_000_000)
    #: Facts in the large and in the small measured namespace.
    large: int = Field(default=100_000, ge=1, le=10_000_000)
    small: int = Field(default=50, ge=1, le=1_000_000)
    #: The shared pool the tenants and the small namespace draw from (at least ``facts`` and
    #: ``small``: see :attr:`pool_size`).
    pool: int = Field(default=5_000, ge=1, le=10_000_000)
    queries: int = Field(default=100, ge=1, le=100_000)
    warmup: int = Field(default=20, ge=0, le=100_000)
    k: int = Field(default=WITHIN, ge=1, le=100)
    batch_size: int = Field(default=1_000, ge=1, le=10_000)
    seed: int = 0
    #: Size of each stored copy's perturbation of its pool vector, relative to the vector.
    noise: float = Field(default=0.1, ge=0.0, le=1.0)
    #: The throwaway local Neo4j versions to run on, one after the other (none: the configured
    #: local version); more than one makes a comparison (:class:`TenantsComparison`).
    versions: tuple[LocalNeo4jVersion, ...] = ()

    @model_validator(mode="after")
    def _versions_need_scratch(self) -> TenantsOptions:
        if self.versions and self.server != "scratch":
            raise ValueError(
                "--neo4j runs on throwaway local servers: not with --server configured"
            )
        if len(set(self.versions)) != len(self.versions):
            raise ValueError("--neo4j names a version twice")
        return self

    @property
    def pool_size(self) -> int:
        """The shared pool: ``pool``, raised to ``facts`` or ``small`` when one is larger (a
        namespace never holds one pool fact twice)."""
        return max(self.pool, self.facts, self.small)

    @property
    def total_facts(self) -> int:
        return self.namespaces * self.facts + self.large + self.small


# --- the report -----------------------------------------------------------------------------------
class RecallFigures(BaseModel):
    """One namespace's recalls in one mode: timings in ms, and how they compare with the exact
    ranking."""

    mode: RecallMode
    queries: int
    warmup: int
    #: The read transaction of each recall (``RecallResult.timing.db_ms``).
    db_ms: Percentiles
    #: Wall time of each ``recall`` call as the caller sees it (query embedding included).
    client_ms: Percentiles
    embed_ms: Percentiles
    #: Share of queries whose first ``WITHIN`` hits hold every fact of the exact top
    #: ``EXACT_TOP`` ...
    exact_top_all: float
    #: ... and the mean share of the exact top ``EXACT_TOP`` found there.
    exact_top_mean: float
    mean_hits: float
    widened: int
    exact_fallbacks: int
    #: How the first vector read of facts went, in how many recalls (RecallResult.vector_paths).
    paths: dict[str, int] = Field(default_factory=dict)
    #: Where each recall's time went, statement by statement (summed per recall).
    statements: list[StatementFigures] = Field(default_factory=list)


class BareRead(BaseModel):
    """The bare vector read timed beside each vector-only recall, with the same vector: its
    statement (``bench_bare_search``, or ``bench_bare_vector`` where the index cannot filter),
    the entries it asked for, and its time as the client saw it (ms, one statement in its own
    transaction), so that recall's time can be read as a ratio to it on a loaded machine."""

    statement: str
    k: int
    db_ms: Percentiles


class NamespaceFigures(BaseModel):
    """One measured namespace: its name in the report, its namespace and size, its recalls in
    each mode, and the bare vector read beside them."""

    name: str
    ns: str
    facts: int
    recalls: list[RecallFigures]
    bare: BareRead | None = None

    def mode(self, mode: RecallMode) -> RecallFigures | None:
        return next((r for r in self.recalls if r.mode == mode), None)


class TenantsReport(BaseModel):
    """The result of :func:`run_tenants_bench`; JSON-ready with ``model_dump(mode="json")``."""

    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    options: TenantsOptions
    machine: MachineInfo
    server: ServerInfo
    embedder: EmbedderInfo
    namespace_prefix: str
    #: Distinct pool texts embedded (the shared pool, or the large namespace when larger).
    pool_texts: int
    pool_embedding: Throughput
    #: Every fact written (tenants, small and large namespaces) through the bare statement.
    load: Throughput
    #: Facts in the whole database while the recalls ran (all namespaces).
    graph_facts: int
    namespaces: list[NamespaceFigures]
    targets: list[TargetResult]
    #: The machine's 1-minute load average when the run began (before it embedded or wrote
    #: anything) and when it ended (its own work included); None where unknown. Above the
    #: number of CPUs at the start, other work shared them.
    load_average: tuple[float, float] | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """No target failed (targets that do not apply do not count)."""
        return all(t.status != "fail" for t in self.targets)


def exact_top_share(
    hits: Sequence[str], exact: Sequence[str], *, top: int = EXACT_TOP, within: int = WITHIN
) -> float:
    """The share of the exact ranking's first ``top`` ids (fewer when it holds fewer) that are
    among the first ``within`` of ``hits``; 1.0 when the exact ranking is empty."""
    wanted = list(dict.fromkeys(exact[:top]))
    if not wanted:
        return 1.0
    found = set(hits[:within])
    return sum(item in found for item in wanted) / len(wanted)


def exact_rankings(vectors: Vectors, queries: Vectors, top: int = EXACT_TOP) -> list[list[int]]:
    """For each row of ``queries``, the positions of the ``top`` rows of ``vectors`` with the
    highest cosine similarity to it, best first (in float64; ties keep the earlier row
    first)."""
    if len(vectors) == 0:
        return [[] for _ in range(len(queries))]
    rows = np.asarray(vectors, dtype=np.float64)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    wanted = np.asarray(queries, dtype=np.float64)
    wanted /= np.linalg.norm(wanted, axis=1, keepdims=True)
    rankings = []
    for scores in wanted @ rows.T:
        order = np.argsort(-scores, kind="stable")
        rankings.append([int(i) for i in order[:top]])
    return rankings


def tenant_targets(namespaces: Sequence[NamespaceFigures]) -> list[TargetResult]:
    """The main benchmark's recall target (database p95 at most 25 ms from 100,000 facts),
    held to the large namespace's default recall."""
    targets = []
    for figures in namespaces:
        default = figures.mode("default")
        if default is None or figures.name != "large":
            continue
        targets.append(
            TargetResult.check(
                f"recall db p95, {figures.name} namespace among tenants",
                figures.facts,
                default.db_ms.p95,
                DB_P95_TARGET_MS,
                "<=",
                "ms",
                min_size=DB_P95_MIN_FACTS,
            )
        )
    return targets


# --- the Markdown ---------------------------------------------------------------------------------
def _share(value: float) -> str:
    return f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def recall_rows(report: TenantsReport) -> list[list[str]]:
    """The rows of the recall table: one per namespace and mode, the Neo4j version first so
    that two reports' rows can stand in one table."""
    rows = []
    for figures in report.namespaces:
        for r in figures.recalls:
            rows.append(
                [
                    report.server.neo4j_version,
                    figures.name,
                    format_count(figures.facts),
                    MODE_LABELS[r.mode],
                    format_ms(r.db_ms.p50),
                    format_ms(r.db_ms.p95),
                    format_ms(r.db_ms.p99),
                    format_ms(r.client_ms.p50),
                    format_ms(r.client_ms.p95),
                    _share(r.exact_top_all),
                    _share(r.exact_top_mean),
                    f"{r.widened} / {r.exact_fallbacks}",
                    ", ".join(f"{p} {n}" for p, n in sorted(r.paths.items())) or "-",
                    f"{r.mean_hits:.1f}",
                ]
            )
    return rows


def bare_rows(report: TenantsReport) -> list[list[str]]:
    """The rows of the table of the bare vector read beside recall: per namespace, its time
    and vector-only and default recall's db p95 as ratios to its p95."""
    rows = []
    for figures in report.namespaces:
        bare = figures.bare
        if bare is None:
            continue
        ratios = []
        for mode in ("vector", "default"):
            r = figures.mode(mode)
            ratio = r.db_ms.p95 / bare.db_ms.p95 if r is not None and bare.db_ms.p95 else None
            ratios.append("-" if ratio is None else f"{ratio:.2f}")
        rows.append(
            [
                report.server.neo4j_version,
                figures.name,
                f"`{bare.statement}` (k={bare.k})",
                format_ms(bare.db_ms.p50),
                format_ms(bare.db_ms.p95),
                *ratios,
            ]
        )
    return rows


BARE_HEADER = [
    "Neo4j",
    "namespace",
    "bare read",
    "db p50",
    "db p95",
    "vector-only recall p95 / bare",
    "default recall p95 / bare",
]
BARE_ALIGN = "lllrrrr"


def statement_rows(report: TenantsReport) -> list[list[str]]:
    """The rows of the table of where recall's time goes: one per namespace, mode and
    statement, the Neo4j version first."""
    rows = []
    for figures in report.namespaces:
        for r in figures.recalls:
            for st in r.statements:
                server = st.server_ms
                rows.append(
                    [
                        report.server.neo4j_version,
                        figures.name,
                        MODE_LABELS[r.mode],
                        f"`{st.name}`",
                        f"{st.per_recall:.2f}",
                        format_ms(st.client_ms.p50),
                        format_ms(st.client_ms.p95),
                        "-" if server is None else format_ms(server.p50),
                        "-" if server is None else format_ms(server.p95),
                    ]
                )
    return rows


#: The alignment of each column of the recall table.
RECALL_ALIGN = "llrlrrrrrrrrlr"

RECALL_HEADER = [
    "Neo4j",
    "namespace",
    "facts",
    "recall",
    "db p50",
    "db p95",
    "db p99",
    "client p50",
    "client p95",
    f"exact top {EXACT_TOP} in top {WITHIN}",
    f"of the exact top {EXACT_TOP} found",
    "widened / exact scan",
    "path",
    "hits",
]


#: What the report says under its recall and bare-read tables.
RECALL_NOTES = [
    "- db: recall's read transaction (`RecallResult.timing.db_ms`), as the main benchmark "
    "reports it; client: the wall time of the `recall` call, the query's embedding "
    "included.",
    f"- exact top {EXACT_TOP} in top {WITHIN}: the share of queries whose first {WITHIN} "
    f"hits hold all {EXACT_TOP} facts that an exact cosine ranking of the namespace's "
    "vectors, as the database stores them, against the query's vector puts first; the next "
    f"column is the mean share of those {EXACT_TOP} found.",
    "- default: recall as a caller gets it (vector and fulltext search fused, the quality "
    "gate); vector index only, no gate: `config={'retrievers': ('vector',)}`, "
    "`min_score=0`, facts only.",
    "- widened / exact scan: recalls whose filters left too few candidates, so that the "
    "index was asked again for more (`RecallResult.widened`), and those that then scored "
    "the namespace exactly (`exact_fallback`).",
    "- path: how the first vector read of facts went, in how many recalls "
    "(`RecallResult.vector_paths`): exact (the namespace scored in full), filtered "
    "(`SEARCH` inside the namespace) or unfiltered (the whole index, filtered after).",
]
BARE_NOTES = [
    "- the bare read ran after each vector-only recall, with its question's vector, in a "
    "transaction of its own: the namespace's nearest facts and nothing else. The ratios "
    "hold on a loaded machine, where the times alone do not.",
]


def _cpu_text(load: Throughput) -> str:
    """The load's CPU per fact, client and server, in brackets; empty where unknown."""
    cpu = load.cpu
    if cpu is None:
        return ""
    server_ms = per_item_ms(cpu.server_seconds, load.items) if cpu.server_seconds else "-"
    return (
        f" (CPU per fact: client {per_item_ms(cpu.client_seconds, load.items)}, server {server_ms})"
    )


def render_tenants_markdown(report: TenantsReport) -> str:
    """The report as Markdown: set-up, how the data was made and loaded, recall, targets."""
    o, server, machine, embedder = report.options, report.server, report.machine, report.embedder
    load, embedding = report.load, report.pool_embedding
    copies = o.namespaces * o.facts / o.pool_size
    cpu_text = _cpu_text(load)
    lines = [
        f"# graphmem bench --tenants ({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"- machine: {machine.cpus} CPUs, {machine.platform}, Python {machine.python}"
        + (
            f"; 1-minute load average {report.load_average[0]:.1f} when the run began, "
            f"{report.load_average[1]:.1f} when it ended"
            if report.load_average
            else ""
        ),
        f"- {server.describe()}",
        f"- embedder: {embedder.model_id} ({embedder.dimension}-d, "
        f"{embedder.backend or 'own'} on {embedder.device})",
        f"- graphmem {report.graphmem_version}; seed {o.seed}; batches of {o.batch_size:,} facts",
        "",
        "## Data",
        "",
        f"{o.namespaces:,} tenant namespaces of {o.facts:,} facts, a small namespace of "
        f"{o.small:,} facts and a large one of {o.large:,}: {o.total_facts:,} facts (the "
        f"database held {report.graph_facts:,} while recall ran). The tenants and the small "
        f"namespace draw their facts from one pool of {o.pool_size:,} distinct synthetic facts "
        f"(none twice in one namespace; each pool fact is in about {copies:,.1f} tenants); the "
        f"large namespace holds the first {o.large:,} facts of the same generator. Texts "
        "repeat verbatim; each stored copy's vector is its pool text's vector plus a seeded "
        f"Gaussian step of relative size {o.noise:g} (cosine about "
        f"{1 / (1 + o.noise**2) ** 0.5:.3f} to it), so that copies are near-identical.",
        "",
        f"- pool embedded once: {report.pool_texts:,} texts, "
        f"{format_count(embedding.per_second)} texts/s",
        f"- loaded through the bare statement (bench_bare_create): {load.items:,} facts in "
        f"{load.seconds:,.0f} s, {format_count(load.per_second)} facts/s{cpu_text}",
        "",
        f"## Recall (k={o.k}; {o.queries} queries after {o.warmup} warm-up ones per namespace "
        "and mode; ms)",
        "",
    ]
    tables = [
        (None, RECALL_HEADER, RECALL_ALIGN, recall_rows(report), RECALL_NOTES),
        ("Beside a bare vector read (ms)", BARE_HEADER, BARE_ALIGN, bare_rows(report), BARE_NOTES),
        (
            "Where the time goes (ms; per recall, summed over a statement's runs in it)",
            STATEMENT_HEADER,
            STATEMENT_ALIGN,
            statement_rows(report),
            STATEMENT_NOTES,
        ),
    ]
    for title, header, align, rows, notes in tables:
        lines += [f"## {title}", ""] if title else []
        lines += [*markdown_table(header, align, rows), "", *notes, ""]
    lines += ["## Targets", ""]
    lines += targets_table(report.targets) if report.targets else ["(none applies)"]
    lines.append("")
    if server.kept:
        lines.append(
            f"The benchmark's namespaces stay in the configured Neo4j: "
            f"`{report.namespace_prefix}-*`."
        )
    else:
        lines.append("The throwaway Neo4j and its data were deleted after the run.")
    return "\n".join(lines) + "\n"


__all__ = [
    "BARE_HEADER",
    "EXACT_TOP",
    "MODE_LABELS",
    "RECALL_HEADER",
    "WITHIN",
    "BareRead",
    "NamespaceFigures",
    "RecallFigures",
    "RecallMode",
    "TenantsOptions",
    "TenantsReport",
    "bare_rows",
    "exact_rankings",
    "exact_top_share",
    "recall_rows",
    "render_tenants_markdown",
    "statement_rows",
    "tenant_targets",
]
