"""The multi-tenant benchmark (``graphmem bench tenants NxM``): recall in one namespace among
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
Everything is written with its vectors through the main benchmark's bare statement
(``bench_bare_create``: the nodes and properties ``remember_many`` writes, without its checks),
in batches of ``batch_size``, one transaction each: the small namespace, then the large one,
then the tenants. Writes are measured by the main benchmark; the load is timed here only to
say how long it took.

Then, in the small namespace, the large one and the first tenant's, questions about their facts
(:func:`~graphmem_bench.bench.synthetic.generate_queries`) go to ``Memory.recall(k=10)``
twice: with the default options (what a caller gets: hybrid search, the quality gate), and
with the vector index alone and no gate (``config={"retrievers": ("vector",)}``,
``min_score=0``), which isolates the index search. Each recall's ten hits are compared with
the exact cosine ranking of the namespace's vectors, read back from the database as it stores
them, against the query's vector (the same embedder; computed here in numpy): the report gives
the share of queries whose top 10 holds the exact top 5, with recall's database time
(``timing.db_ms``: its read transaction, as the main benchmark reports it), the client's wall
time per call (query embedding included), and how many recalls widened their search or fell
back to exact scoring (``RecallResult.widened`` and ``exact_fallback``).
"""

from __future__ import annotations

import collections
import hashlib
import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from graphmem import DatabaseError, RecallConfig, __version__
from graphmem.testing import (
    Progress,
    StatementTime,
    VectorParam,
    run_query,
    statement_times,
    stream_query,
)
from graphmem_bench.bench.report import Percentiles, Throughput
from graphmem_bench.bench.runner import embedder_info, load_average, machine_info, server_info
from graphmem_bench.bench.synthetic import SyntheticFact, generate_facts, generate_queries
from graphmem_bench.bench.tenants_report import (
    BareRead,
    NamespaceFigures,
    RecallFigures,
    RecallMode,
    TenantsOptions,
    TenantsReport,
    exact_rankings,
    exact_top_share,
    tenant_targets,
)
from graphmem_bench.bench.tenants_statements import statement_figures
from graphmem_bench.bench.timing import Meter, chunks, ticker, write_bare
from graphmem_bench.run import Run, RunOn, measuring_run

if TYPE_CHECKING:
    from graphmem import Memory
    from graphmem.testing import Embedder, Graph, Vectors


def namespace_vectors(on: Memory | Graph, ns: str) -> tuple[list[str], Vectors]:
    """The ids of the facts of ``ns`` and their stored embeddings, as the database holds
    them (read as a stream, row by row), through a client or its ``graph``."""
    ids: list[str] = []
    rows: list[Vectors] = []
    for record in stream_query(on, "bench_namespace_vectors", ns=ns):
        ids.append(record["id"])
        rows.append(np.asarray(record["embedding"], dtype=np.float32))
    return ids, np.vstack(rows) if rows else np.zeros((0, 0), np.float32)


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
    """Write ``target``'s facts with their vectors through the bare statement, one transaction
    per batch; its batches."""
    batches = 0
    for chunk in chunks(len(target.members), batch_size):
        items = [
            {"text": pool[i].text, "tags": [pool[i].topic], "source": "graphmem bench"}
            for i in target.members[chunk.start : chunk.stop]
        ]
        rows = target.vectors[chunk.start : chunk.stop]
        with meter.timing():
            target.ids += write_bare(memory, target.ns, items, rows, target.ns)
        batches += 1
    return batches


# --- the recalls ----------------------------------------------------------------------------------
#: The options of each mode's recall call (besides ``k``).
_MODE_OPTIONS: dict[RecallMode, dict[str, Any]] = {
    "default": {},
    "vector": {
        "kinds": ("fact",),
        "config": {"retrievers": ("vector",)},
        "min_score": 0.0,
        "track_access": False,
    },
}


class _BareTimer:
    """Times the bare vector read beside recall in one namespace: through SEARCH where the
    index filters inside itself (asking for no more than the namespace holds, see
    recall_search_filtered), else the whole index filtered after; as many entries as recall
    asks the index for."""

    def __init__(self, memory: Memory, target: _Namespace, k: int) -> None:
        filtered = memory.graph.schema.filtered_search
        candidates = RecallConfig().candidates(k)
        self.memory, self.ns = memory, target.ns
        self.statement = "bench_bare_search" if filtered else "bench_bare_vector"
        self.k = min(candidates, len(target.members)) if filtered else candidates
        self.ms: list[float] = []

    def time(self, vector: Vectors) -> None:
        param = VectorParam(vector.tolist())
        started = time.perf_counter()
        run_query(self.memory, self.statement, ns=self.ns, vector=param, k=self.k)
        self.ms.append((time.perf_counter() - started) * 1000)

    def figures(self) -> BareRead:
        return BareRead(statement=self.statement, k=self.k, db_ms=Percentiles.of(self.ms))


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
    ids, stored = namespace_vectors(memory, target.ns)
    if sorted(ids) != sorted(target.ids):
        raise DatabaseError(f"{target.ns}: {len(ids):,} facts stored, {len(target.ids):,} written")
    vectors = embedder.embed(questions)
    rankings = exact_rankings(stored, vectors[options.warmup :])
    exact = [[ids[i] for i in ranking] for ranking in rankings]
    recalls = []
    bare = _BareTimer(memory, target, options.k)
    for mode, extra in _MODE_OPTIONS.items():
        for question in questions[: options.warmup]:
            memory.recall(question, ns=target.ns, k=options.k, **extra)
        timings: dict[str, list[float]] = {"db": [], "client": [], "embed": []}
        shares: list[float] = []
        hits = widened = fallbacks = 0
        paths: collections.Counter[str] = collections.Counter()
        statements: list[list[StatementTime]] = []
        tick = ticker(say, f"recall, {target.name}, {mode}", options.queries, "queries")
        began = time.perf_counter()
        for done, (question, wanted) in enumerate(
            zip(questions[options.warmup :], exact, strict=True), start=1
        ):
            started = time.perf_counter()
            with statement_times() as timed:
                result = memory.recall(question, ns=target.ns, k=options.k, **extra)
            timings["client"].append((time.perf_counter() - started) * 1000)
            statements.append(timed)
            paths[result.vector_paths.get("fact", "none")] += 1
            if mode == "vector":  # the bare vector read, beside it, with the same vector
                bare.time(vectors[options.warmup + done - 1])
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
                paths=dict(paths),
                statements=statement_figures(statements),
            )
        )
    return NamespaceFigures(
        name=target.name,
        ns=target.ns,
        facts=len(target.members),
        recalls=recalls,
        bare=bare.figures(),
    )


# --- the run --------------------------------------------------------------------------------------
def run_tenants_bench(options: TenantsOptions | None = None, **on: Unpack[RunOn]) -> TenantsReport:
    """Run the multi-tenant benchmark (on a throwaway Neo4j unless ``options.server`` is
    ``configured``, where its ``bench-tenants-*`` namespaces stay) and return its report."""
    options = options or TenantsOptions()
    with measuring_run(options, **on) as run:
        return _run(options, run)


def _run(options: TenantsOptions, run: Run) -> TenantsReport:
    say, started = run.say, run.started
    began_load = load_average()
    embedder = run.embedder
    prefix = f"bench-tenants-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(2)}"
    shared = options.pool_size
    texts = max(shared, options.large)
    pool = pool_facts(texts, options.seed)
    say(f"embedding the pool: {texts:,} distinct synthetic facts")
    pool_embedding, pool_vectors = _embed(
        embedder, [f.text for f in pool], options.batch_size, say, run.settings.cache_dir
    )
    seed = options.seed
    small = _members(shared, options.small, (seed, "small"))
    large = list(range(options.large))
    named = [
        _Namespace("small", f"{prefix}-small", small, _copies(pool_vectors, small, options, -1)),
        _Namespace("large", f"{prefix}-large", large, _copies(pool_vectors, large, options, -2)),
    ]
    memory = run.memory()
    server = server_info(memory, run)
    say(f"Neo4j {server.neo4j_version} at {run.target.uri}; namespaces {prefix}-*")
    run.settle("loading")
    meter = Meter(run.server_pid)
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
            "tenant", f"{prefix}-t{t:05d}", members, _copies(pool_vectors, members, options, t)
        )
        batches += _write(memory, tenant, pool, options.batch_size, meter)
        written += options.facts
        tick(written, meter.seconds)
        if t == 0:  # measured too: a namespace of M facts among the others
            named.append(tenant)
    load = meter.throughput(written, batches)
    (counts,) = run_query(memory, "graph_size")
    run.settle("timing recall")
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
        embedder=embedder_info(embedder, run.settings),
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
    embedder: Embedder, texts: Sequence[str], batch_size: int, say: Progress, cache: Path
) -> tuple[Throughput, Vectors]:
    """The pool's vectors, embedded in batches (and kept under ``cache``/bench, keyed by the
    model and every text, so that the next run of the same pool, on another server too,
    reads them back: its throughput is then the first run's)."""
    digest = hashlib.sha256(
        "\n".join([str(embedder.model_id), str(embedder.dimension), *texts]).encode()
    ).hexdigest()[:24]
    kept = cache / "bench" / f"tenants-pool-{digest}.npz"
    if kept.exists():
        with np.load(kept) as stored:
            say(f"  the pool's vectors, embedded before: {kept}")
            seconds, batches = float(stored["seconds"]), int(stored["batches"])
            vectors: Vectors = stored["vectors"]
            return Throughput(items=len(texts), seconds=seconds, batches=batches), vectors
    meter = Meter(None)
    parts = []
    tick = ticker(say, "embedding", len(texts), "texts")
    for chunk in chunks(len(texts), batch_size):
        with meter.timing():
            parts.append(embedder.embed(list(texts[chunk.start : chunk.stop])))
        tick(chunk.stop, meter.seconds)
    vectors = np.vstack(parts) if parts else np.zeros((0, embedder.dimension), np.float32)
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(".partial.npz")
    np.savez(partial, vectors=vectors, seconds=meter.seconds, batches=len(parts))
    partial.replace(kept)
    return meter.throughput(len(texts), len(parts)), vectors


def _copies(pool: Vectors, members: Sequence[int], options: TenantsOptions, which: int) -> Vectors:
    """The stored vectors of a namespace's copies of ``members``: each pool vector perturbed,
    seeded by the run's seed and ``which`` namespace (-2 the large one, -1 the small one, then
    the tenants from 0)."""
    rows = pool[np.asarray(members, dtype=np.intp)]
    return perturbed(rows, options.noise, (options.seed & 0xFFFFFFFF, which + 3))


# exact_top_share: where each recall is compared with the exact ranking (a test records it).
__all__ = [
    "exact_top_share",
    "namespace_vectors",
    "perturbed",
    "pool_facts",
    "run_tenants_bench",
]
