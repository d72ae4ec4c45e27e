"""The multi-tenant benchmark (``graphmem bench --tenants NxM``): recall in one namespace among
many that hold near-identical facts, against an exact ranking of that namespace alone.

One database holds ``namespaces`` tenant namespaces of ``facts`` facts each, a *small*
namespace (``small`` facts) and a *large* one (``large`` facts). Every fact comes from one
pool of distinct synthetic facts (:func:`~graphmem_bench.bench.synthetic.generate_facts`, no
updates): the large namespace holds the first ``large`` of them, and each tenant and the
small namespace a seeded sample of the first ``pool`` (no fact twice in one namespace), so
that a fact of the small namespace has copies in many tenants. The pool's texts are embedded
once; each stored copy keeps its pool text verbatim and gets the pool vector plus a small
seeded perturbation of its own (``noise``: relative size of a Gaussian step, cosine about
``1 / sqrt(1 + noise**2)`` to the pool vector), so that copies are near-identical, not equal.
Everything is written through ``Memory.remember_many(..., vectors=...)``, in batches of
``batch_size``: the small namespace, then the large one, then the tenants; the load is timed
as the main benchmark times its writes.

Then, in the small and in the large namespace, questions about their facts
(:func:`~graphmem_bench.bench.synthetic.generate_queries`) go to ``Memory.recall(k=10)``
twice: with the default options (what a caller gets: hybrid search, the quality gate), and
with the vector index alone and no gate (``config={"retrievers": ("vector",)}``,
``min_score=-1``), which isolates the index search. Each recall's ten hits are compared with
the exact cosine ranking of the namespace's vectors, read back from the database as it stores
them, against the query's vector (the same embedder; computed here in numpy): the report gives
the share of queries whose top 10 holds the exact top 5, with recall's database time
(``timing.db_ms``: its read transaction, as the main benchmark reports it), the client's wall
time per call (query embedding included), and how many recalls widened their search or fell
back to exact scoring (``RecallResult.widened`` and ``exact_fallback``).
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, computed_field

from graphmem import __version__
from graphmem.embed.loading import load_embedder
from graphmem.errors import DatabaseError
from graphmem.servers.connection import Neo4jTarget
from graphmem.servers.scratch import (
    Progress,
    ServerOptions,
    on_server,
    scratch_server_pid,
    settle,
)
from graphmem.settings import GraphmemSettings
from graphmem.store import cypher, db
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
from graphmem_bench.bench.runner import embedder_info, load_average, machine_info, server_info
from graphmem_bench.bench.synthetic import SyntheticFact, generate_facts, generate_queries
from graphmem_bench.bench.timing import Meter, chunks, ticker
from graphmem_bench.markdown import markdown_table

if TYPE_CHECKING:
    import neo4j

    from graphmem.client import Memory
    from graphmem.embed.embedder import Embedder, Vectors

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

    @property
    def pool_size(self) -> int:
        """The shared pool: ``pool``, raised to ``facts`` or ``small`` when one is larger (a
        namespace never holds one pool fact twice)."""
        return max(self.pool, self.facts, self.small)

    @property
    def total_facts(self) -> int:
        return self.namespaces * self.facts + self.large + self.small


# --- the report -----------------------------------------------------------------------------------
RecallMode = Literal["default", "vector"]
#: How the report names each way recall is called.
MODE_LABELS: dict[str, str] = {
    "default": "default (hybrid, gated)",
    "vector": "vector index only, no gate",
}


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


class NamespaceFigures(BaseModel):
    """One measured namespace: its name in the report, its namespace and size, and its recalls
    in each mode."""

    name: str
    ns: str
    facts: int
    recalls: list[RecallFigures]

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
    #: Every fact written (tenants, small and large namespaces) through remember_many.
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


def namespace_vectors(driver: neo4j.Driver, database: str, ns: str) -> tuple[list[str], Vectors]:
    """The ids of the facts of ``ns`` and their stored embeddings, as the database holds
    them (read as a stream, row by row)."""
    query = cypher.query("bench_namespace_vectors")
    query.check_params({"ns": ns})
    ids: list[str] = []
    rows: list[Vectors] = []
    with driver.session(database=database, default_access_mode="READ") as session:
        for record in session.run(query.text, {"ns": ns}):
            ids.append(record["id"])
            rows.append(np.asarray(record["embedding"], dtype=np.float32))
    return ids, np.vstack(rows) if rows else np.zeros((0, 0), np.float32)


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


# --- the data -------------------------------------------------------------------------------------
def pool_facts(count: int, seed: int) -> list[SyntheticFact]:
    """``count`` synthetic facts (no updates) with distinct texts, each indexed by its place."""
    n = count
    while True:
        seen: set[str] = set()
        distinct = []
        for fact in generate_facts(n, seed=seed, update_share=0.0):
            if fact.text not in seen:
                seen.add(fact.text)
                distinct.append(fact)
        if len(distinct) >= count or n >= 4 * count + 1_000:
            break
        n += 2 * (count - len(distinct)) + 10
    if len(distinct) < count:
        raise ValueError(f"the generator made only {len(distinct):,} distinct facts of {count:,}")
    return [replace(fact, index=i) for i, fact in enumerate(distinct[:count])]


def perturbed(vectors: Vectors, noise: float, seed: Sequence[int]) -> Vectors:
    """``vectors`` (unit rows) each moved by a seeded Gaussian step of about ``noise`` times
    its length, and made unit again."""
    if noise == 0 or len(vectors) == 0:
        return np.asarray(vectors, dtype=np.float32)
    rng = np.random.default_rng(list(seed))
    step = rng.standard_normal(vectors.shape) * (noise / np.sqrt(vectors.shape[1]))
    moved = vectors + step
    unit: Vectors = (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)
    return unit


class _Namespace:
    """One namespace to write: its pool facts (by pool position) and its stored vectors."""

    def __init__(self, name: str, ns: str, members: Sequence[int], vectors: Vectors) -> None:
        self.name = name
        self.ns = ns
        self.members = list(members)
        self.vectors = vectors
        self.ids: list[str] = []


def _members(pool: int, count: int, seed: Sequence[int | str]) -> list[int]:
    """A seeded sample of ``count`` distinct pool positions of the first ``pool``."""
    return random.Random("-".join(map(str, seed))).sample(range(pool), count)


def _write(
    memory: Memory,
    target: _Namespace,
    pool: Sequence[SyntheticFact],
    batch_size: int,
    meter: Meter,
) -> int:
    """Write ``target``'s facts through remember_many with their vectors; its batches."""
    batches = 0
    for chunk in chunks(len(target.members), batch_size):
        items = [
            {"text": pool[i].text, "tags": [pool[i].topic], "source": "graphmem bench"}
            for i in target.members[chunk.start : chunk.stop]
        ]
        rows = target.vectors[chunk.start : chunk.stop]
        with meter.timing():
            created = memory.remember_many(items, ns=target.ns, vectors=rows)
        if len(created) != len(items):
            raise DatabaseError(f"{target.ns}: wrote {len(created)} of {len(items)} facts")
        target.ids += [fact.id for fact in created]
        batches += 1
    return batches


# --- the recalls ----------------------------------------------------------------------------------
#: The options of each mode's recall call (besides ``k``).
_MODE_OPTIONS: dict[RecallMode, dict[str, Any]] = {
    "default": {},
    "vector": {
        "kinds": ("fact",),
        "config": {"retrievers": ("vector",)},
        "min_score": -1.0,
        "track_access": False,
    },
}


def _recalls(
    memory: Memory,
    embedder: Embedder,
    target: _Namespace,
    pool: Sequence[SyntheticFact],
    options: TenantsOptions,
    seed: int,
    say: Progress,
) -> NamespaceFigures:
    facts = [replace(pool[i], index=n) for n, i in enumerate(target.members)]
    questions = [
        q.text for q in generate_queries(facts, options.warmup + options.queries, seed=seed)
    ]
    say(f"{target.name} namespace: reading its {len(facts):,} stored vectors, ranking exactly")
    ids, stored = namespace_vectors(memory.graph.driver, memory.graph.database, target.ns)
    if sorted(ids) != sorted(target.ids):
        raise DatabaseError(f"{target.ns}: {len(ids):,} facts stored, {len(target.ids):,} written")
    vectors = embedder.embed(questions)
    rankings = exact_rankings(stored, vectors[options.warmup :])
    exact = [[ids[i] for i in ranking] for ranking in rankings]
    recalls = []
    for mode, extra in _MODE_OPTIONS.items():
        for question in questions[: options.warmup]:
            memory.recall(question, ns=target.ns, k=options.k, **extra)
        timings: dict[str, list[float]] = {"db": [], "client": [], "embed": []}
        shares: list[float] = []
        hits = widened = fallbacks = 0
        tick = ticker(say, f"recall, {target.name}, {mode}", options.queries, "queries")
        began = time.perf_counter()
        for done, (question, wanted) in enumerate(
            zip(questions[options.warmup :], exact, strict=True), start=1
        ):
            started = time.perf_counter()
            result = memory.recall(question, ns=target.ns, k=options.k, **extra)
            timings["client"].append((time.perf_counter() - started) * 1000)
            timings["db"].append(result.timing.db_ms)
            timings["embed"].append(result.timing.embed_ms)
            found = [hit.id for hit in result.hits if hit.kind == "fact"]
            shares.append(exact_top_share(found, wanted))
            hits += len(result.hits)
            widened += result.widened
            fallbacks += result.exact_fallback
            tick(done, time.perf_counter() - began)
        recalls.append(
            RecallFigures(
                mode=mode,
                queries=options.queries,
                warmup=options.warmup,
                db_ms=Percentiles.of(timings["db"]),
                client_ms=Percentiles.of(timings["client"]),
                embed_ms=Percentiles.of(timings["embed"]),
                exact_top_all=sum(share == 1.0 for share in shares) / len(shares),
                exact_top_mean=sum(shares) / len(shares),
                mean_hits=hits / options.queries,
                widened=widened,
                exact_fallbacks=fallbacks,
            )
        )
    return NamespaceFigures(
        name=target.name, ns=target.ns, facts=len(target.members), recalls=recalls
    )


# --- the run --------------------------------------------------------------------------------------
def run_tenants_bench(
    options: TenantsOptions | None = None,
    *,
    settings: GraphmemSettings | None = None,
    target: Neo4jTarget | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> TenantsReport:
    """Run the multi-tenant benchmark (on a throwaway Neo4j unless ``options.server`` is
    ``configured``, where its ``bench-tenants-*`` namespaces stay) and return its report."""
    options = options or TenantsOptions()
    return on_server(
        options,
        settings,
        target,
        progress,
        lambda run_settings, run_target, say: _run(
            options, run_settings, run_target, embedder, say
        ),
    )


def _run(
    options: TenantsOptions,
    settings: GraphmemSettings,
    target: Neo4jTarget,
    embedder: Embedder | None,
    say: Progress,
) -> TenantsReport:
    from graphmem.client import Memory

    started = datetime.now(UTC)
    began_load = load_average()
    embedder = load_embedder(settings, embedder, say)
    prefix = f"bench-tenants-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(2)}"
    shared = options.pool_size
    texts = max(shared, options.large)
    pool = pool_facts(texts, options.seed)
    say(f"embedding the pool: {texts:,} distinct synthetic facts")
    pool_embedding, pool_vectors = _embed(embedder, [f.text for f in pool], options.batch_size, say)
    seed = options.seed
    small = _members(shared, options.small, (seed, "small"))
    large = list(range(options.large))
    named = [
        _Namespace("small", f"{prefix}-small", small, _copies(pool_vectors, small, options, -1)),
        _Namespace("large", f"{prefix}-large", large, _copies(pool_vectors, large, options, -2)),
    ]
    with Memory(settings, target=target, embedder=embedder) as memory:
        driver, database = memory.graph.driver, memory.graph.database
        server = server_info(driver, database, target, options, settings)
        say(f"Neo4j {server.neo4j_version} at {target.uri}; namespaces {prefix}-*")
        pid = scratch_server_pid(options, settings)
        settle(pid, "loading", say)
        meter = Meter(pid)
        batches = 0
        tick = ticker(say, "loading", options.total_facts, "facts")
        written = 0
        for part in named:
            batches += _write(memory, part, pool, options.batch_size, meter)
            written += len(part.members)
            tick(written, meter.seconds)
        for t in range(options.namespaces):
            members = _members(shared, options.facts, (seed, t))
            tenant = _Namespace(
                "tenant",
                f"{prefix}-t{t:05d}",
                members,
                _copies(pool_vectors, members, options, t),
            )
            batches += _write(memory, tenant, pool, options.batch_size, meter)
            written += options.facts
            tick(written, meter.seconds)
        load = meter.throughput(written, batches)
        (counts,) = db.execute(driver, database, cypher.query("graph_size"))
        settle(pid, "timing recall", say)
        measured = [
            _recalls(memory, embedder, part, pool, options, seed + 1 + n, say)
            for n, part in enumerate(named)
        ]
    machine = machine_info()
    ended_load = load_average()
    return TenantsReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        options=options,
        machine=machine,
        server=server,
        embedder=embedder_info(embedder, settings),
        namespace_prefix=prefix,
        pool_texts=texts,
        pool_embedding=pool_embedding,
        load=load,
        graph_facts=int(counts["facts"]),
        namespaces=measured,
        targets=tenant_targets(measured),
        load_average=(
            None if began_load is None or ended_load is None else (began_load, ended_load)
        ),
    )


def _embed(
    embedder: Embedder, texts: Sequence[str], batch_size: int, say: Progress
) -> tuple[Throughput, Vectors]:
    meter = Meter(None)
    parts = []
    tick = ticker(say, "embedding", len(texts), "texts")
    for chunk in chunks(len(texts), batch_size):
        with meter.timing():
            parts.append(embedder.embed(list(texts[chunk.start : chunk.stop])))
        tick(chunk.stop, meter.seconds)
    vectors = np.vstack(parts) if parts else np.zeros((0, embedder.dimension), np.float32)
    return meter.throughput(len(texts), len(parts)), vectors


def _copies(pool: Vectors, members: Sequence[int], options: TenantsOptions, which: int) -> Vectors:
    """The stored vectors of a namespace's copies of ``members``: each pool vector perturbed,
    seeded by the run's seed and ``which`` namespace (-2 the large one, -1 the small one, then
    the tenants from 0)."""
    rows = pool[np.asarray(members, dtype=np.intp)]
    return perturbed(rows, options.noise, (options.seed & 0xFFFFFFFF, which + 3))


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
                    f"{r.mean_hits:.1f}",
                ]
            )
    return rows


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
    "hits",
]


def render_tenants_markdown(report: TenantsReport) -> str:
    """The report as Markdown: set-up, how the data was made and loaded, recall, targets."""
    o, server, machine, embedder = report.options, report.server, report.machine, report.embedder
    load, embedding = report.load, report.pool_embedding
    copies = o.namespaces * o.facts / o.pool_size
    cpu = load.cpu
    cpu_text = ""
    if cpu is not None:
        server_ms = per_item_ms(cpu.server_seconds, load.items) if cpu.server_seconds else "-"
        cpu_text = (
            f" (CPU per fact: client {per_item_ms(cpu.client_seconds, load.items)}, "
            f"server {server_ms})"
        )
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
        f"- loaded through remember_many(vectors=...): {load.items:,} facts in "
        f"{load.seconds:,.0f} s, {format_count(load.per_second)} facts/s{cpu_text}",
        "",
        f"## Recall (k={o.k}; {o.queries} queries after {o.warmup} warm-up ones per namespace "
        "and mode; ms)",
        "",
    ]
    lines += markdown_table(RECALL_HEADER, "llrlrrrrrrrrr", recall_rows(report))
    lines += [
        "",
        "- db: recall's read transaction (`RecallResult.timing.db_ms`), as the main benchmark "
        "reports it; client: the wall time of the `recall` call, the query's embedding "
        "included.",
        f"- exact top {EXACT_TOP} in top {WITHIN}: the share of queries whose first {WITHIN} "
        f"hits hold all {EXACT_TOP} facts that an exact cosine ranking of the namespace's "
        "vectors, as the database stores them, against the query's vector puts first; the next "
        f"column is the mean share of those {EXACT_TOP} found.",
        "- default: recall as a caller gets it (vector and fulltext search fused, the quality "
        "gate); vector index only, no gate: `config={'retrievers': ('vector',)}`, "
        "`min_score=-1`, facts only.",
        "- widened / exact scan: recalls whose filters left too few candidates, so that the "
        "index was asked again for more (`RecallResult.widened`), and those that then scored "
        "the namespace exactly (`exact_fallback`).",
        "",
        "## Targets",
        "",
    ]
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
    "EXACT_TOP",
    "MODE_LABELS",
    "RECALL_HEADER",
    "WITHIN",
    "NamespaceFigures",
    "RecallFigures",
    "TenantsOptions",
    "TenantsReport",
    "exact_rankings",
    "exact_top_share",
    "namespace_vectors",
    "perturbed",
    "pool_facts",
    "recall_rows",
    "render_tenants_markdown",
    "run_tenants_bench",
    "tenant_targets",
]
