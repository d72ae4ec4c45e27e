"""``graphmem bench``: ingest throughput and recall latency on synthetic memories.

For each size, in one run against one Neo4j, with a fresh namespace per size and phase:

1. **embedding ceiling**: texts per second through ``embedder.embed`` alone, in the ingest
   batch size; the vectors are kept for phase 5. Every size's ceiling is measured first,
   before anything is written, so that no background work of the server runs beside it;
   then the model's backends are compared on the first size's texts (torch, ONNX float32,
   ONNX int8: each one's ceiling, and the cosine of each ONNX vector to torch's, see
   :mod:`graphmem_bench.bench.backends`);
2. **end-to-end ingest**: facts per second through :meth:`Memory.remember_many`, embedding
   included; updates are written with ``supersedes`` naming the fact they replace;
3. **episodes**: messages per second through :meth:`Memory.ingest` (a tenth of the size);
4. **recall latency**: questions about the data through :meth:`Memory.recall` on the
   end-to-end namespace, after warm-up queries: percentiles of the total, the query
   embedding, the read transaction and the access-stamp write;
5. **Neo4j-only writes**: the same facts through ``remember_many(..., vectors=...)`` with the
   vectors of phase 1, so only validation, Bolt and the transaction are timed. They come after
   recall because they repeat the end-to-end namespace's vectors: vector search cannot filter
   by namespace, so during recall each fact's twin would take a place in every candidate list.
   Their batches alternate with those of the **bare** baseline: the same facts, vectors and
   batches through one plain ``UNWIND ... CREATE`` statement (``bench_bare_create``: the same
   properties, embeddings and supersessions, nothing else) into a namespace of its own, timed
   the same way, so that both write into an index of the same size under the same merges; the
   report gives the ratio of the two rates.

Before the first size, an untimed warm-up writes facts (with random vectors), messages and
recalls into a namespace of its own, so that the first measured phase does not pay for a
cold server's query planning and JIT compilation. On the throwaway server, the ceilings and
each of phases 2 to 5 start once the server is idle, so that no phase is charged for the Lucene
merges an earlier step left behind (and the merges a phase leaves are timed by none).

By default the run uses a throwaway local Neo4j in a temporary directory, stopped and deleted
at the end, so nothing touches the configured graph. With ``server="configured"`` it writes
into ``bench-<time>-...`` namespaces of the configured Neo4j, which stay there.

The report's models and targets are in :mod:`graphmem_bench.bench.report`, its Markdown in
:mod:`graphmem_bench.bench.render`, the timed steps shared with the peer benchmark in
:mod:`graphmem_bench.bench.timing`, and the run protocol in :mod:`graphmem_bench.run`.
"""

from __future__ import annotations

import os
import platform
import secrets
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Unpack

import numpy as np

from graphmem import DatabaseError, GraphmemSettings, __version__
from graphmem.testing import Progress, run_query, settle
from graphmem_bench.bench.backends import compare_backends
from graphmem_bench.bench.report import (
    BenchOptions,
    BenchReport,
    EmbedderInfo,
    MachineInfo,
    Percentiles,
    RecallLatency,
    ServerInfo,
    SizeResult,
    Throughput,
    backend_targets,
    evaluate_targets,
)
from graphmem_bench.bench.synthetic import (
    SyntheticFact,
    generate_facts,
    generate_messages,
    generate_queries,
)
from graphmem_bench.bench.timing import (
    TimedEmbedder,
    chunks,
    embed_ceiling,
    fact_item,
    plan_batches,
    ticker,
    with_tail,
    write_bare,
    write_facts,
    write_paired,
)
from graphmem_bench.run import Run, RunOn, measuring_run

if TYPE_CHECKING:
    from graphmem import Memory
    from graphmem.testing import Embedder, Vectors


# --- the run --------------------------------------------------------------------------------------
def _ingest(
    memory: Memory, ns: str, size: int, seed: int, batch_size: int, say: Progress
) -> Throughput:
    messages = generate_messages(size, seed=seed)
    tick = ticker(say, "episodes", size, "messages")
    seconds = 0.0
    batches = 0
    for chunk in chunks(len(messages), batch_size):
        batch = [messages[i].as_message() for i in chunk]
        began = time.perf_counter()
        result = memory.ingest(batch, ns=ns)
        seconds += time.perf_counter() - began
        batches += 1
        if result.created != len(batch):
            raise DatabaseError(f"episodes: stored {result.created} of {len(batch)} messages")
        tick(chunk.stop, seconds)
    return Throughput(items=len(messages), seconds=seconds, batches=batches)


def _recall(
    memory: Memory,
    ns: str,
    facts: Sequence[SyntheticFact],
    ids: dict[int, str],
    options: BenchOptions,
    seed: int,
    say: Progress,
) -> RecallLatency:
    queries = generate_queries(facts, options.warmup + options.queries, seed=seed)
    for query in queries[: options.warmup]:
        memory.recall(query.text, ns=ns, k=options.k)
    timings: dict[str, list[float]] = {"total": [], "embed": [], "db": [], "stamp": [], "sum": []}
    hits = found = fallbacks = 0
    tick = ticker(say, "recall", options.queries, "queries")
    began = time.perf_counter()
    for done, query in enumerate(queries[options.warmup :], start=1):
        result = memory.recall(query.text, ns=ns, k=options.k)
        timing = result.timing
        timings["total"].append(timing.total_ms)
        timings["embed"].append(timing.embed_ms)
        timings["db"].append(timing.db_ms)
        timings["stamp"].append(timing.stamp_ms)
        timings["sum"].append(timing.db_ms + timing.stamp_ms)
        hits += len(result.hits)
        found += ids[query.fact_index] in {hit.id for hit in result.hits}
        fallbacks += result.exact_fallback
        tick(done, time.perf_counter() - began)
    measured = max(1, options.queries)
    return RecallLatency(
        queries=options.queries,
        warmup=options.warmup,
        k=options.k,
        total_ms=Percentiles.of(timings["total"]),
        embed_ms=Percentiles.of(timings["embed"]),
        db_ms=Percentiles.of(timings["db"]),
        stamp_ms=Percentiles.of(timings["stamp"]),
        db_stamp_ms=Percentiles.of(timings["sum"]),
        mean_hits=hits / measured,
        found_share=found / measured,
        exact_fallbacks=fallbacks,
    )


def _warm_up(
    memory: Memory, embedder: Embedder, ns: str, options: BenchOptions, say: Progress
) -> None:
    """Untimed writes (and bare ones, in a namespace of their own), ingest and recalls in their
    own namespace, through the same calls."""
    count = options.warmup_facts
    say(f"warming up: {count:,} facts with random vectors, messages and recalls in {ns}")
    facts = generate_facts(count, seed=options.seed - 1, update_share=options.update_share)
    rows = np.random.default_rng(options.seed).standard_normal((count, embedder.dimension))
    vectors = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    write_facts(memory, ns, facts, plan_batches(facts, options.batch_size), vectors, "warm-up", say)
    # The bare statement of the Neo4j-only phase, on a few batches of the same facts.
    head = facts[: 3 * options.batch_size]
    ids: dict[int, str] = {}
    for batch in plan_batches(head, options.batch_size):
        items = [fact_item(head[i], ids) for i in batch]
        rows = vectors[np.asarray(batch, dtype=np.intp)]
        created = write_bare(memory, f"{ns}-bare", items, rows, "warm-up")
        ids.update(zip(batch, created, strict=True))
    _ingest(memory, ns, min(count, 100), options.seed - 1, options.batch_size, say)
    for query in generate_queries(facts, 10, seed=options.seed):
        memory.recall(query.text, ns=ns, k=options.k)


def _graph_counts(memory: Memory) -> tuple[int, int]:
    (record,) = run_query(memory, "graph_size")
    return int(record["facts"]), int(record["episodes"])


class _SizeData(NamedTuple):
    """One size's facts, and their vectors from the embedding-ceiling measurement."""

    size: int
    seed: int
    facts: list[SyntheticFact]
    ceiling: Throughput
    vectors: Vectors


def _prepare_size(
    embedder: Embedder, size: int, options: BenchOptions, pid: int | None, say: Progress
) -> _SizeData:
    # Each size gets its own data, so that no namespace repeats another size's vectors.
    seed = options.seed * 1_000_003 + size
    facts = generate_facts(size, seed=seed, update_share=options.update_share)
    say(f"{size:,} facts: embedding ceiling")
    ceiling, vectors = embed_ceiling(
        embedder, [fact.text for fact in facts], options.batch_size, say, pid=pid
    )
    return _SizeData(size, seed, facts, ceiling, vectors)


def _bench_size(
    memory: Memory,
    embedder: TimedEmbedder,
    data: _SizeData,
    options: BenchOptions,
    prefix: str,
    pid: int | None,
    say: Progress,
) -> SizeResult:
    size, seed, facts, ceiling, vectors = data
    updates = sum(fact.is_update for fact in facts)
    messages = max(1, round(size * options.episodes_per_fact))
    namespaces = {
        phase: f"{prefix}-{size}-{phase.replace('_', '-')}"
        for phase in ("end_to_end", "neo4j_only", "bare", "episodes")
    }
    say(f"{size:,} facts ({updates:,} updates), {messages:,} messages")
    batches = plan_batches(facts, options.batch_size)
    # Each timed phase starts once the work the steps before it left is done (scratch_server_pid).
    settle(pid, "timing the end-to-end writes", say)
    embedder.seconds = 0.0
    end_to_end, ids = write_facts(
        memory, namespaces["end_to_end"], facts, batches, None, "end-to-end", say, pid=pid
    )
    embed_seconds = embedder.seconds
    end_to_end = with_tail(end_to_end, settle(pid, "timing the episodes", say))
    episodes = _ingest(memory, namespaces["episodes"], messages, seed + 1, options.batch_size, say)
    graph_facts, graph_episodes = _graph_counts(memory)
    settle(pid, "timing recall", say)
    recall = _recall(memory, namespaces["end_to_end"], facts, ids, options, seed + 2, say)
    stats = memory.stats(ns=namespaces["end_to_end"])
    # Last, so that recall above did not search these twins of the end-to-end vectors.
    settle(pid, "timing the Neo4j-only writes and the bare ones", say)
    neo4j_only, bare = write_paired(
        memory,
        (namespaces["neo4j_only"], namespaces["bare"]),
        facts,
        batches,
        vectors,
        say,
        pid=pid,
    )
    # Both sides' merges: their batches alternated.
    neo4j_only = with_tail(neo4j_only, settle(pid, "measuring the merges they left", say))
    return SizeResult(
        size=size,
        updates=updates,
        messages=messages,
        namespaces=namespaces,
        embedding_ceiling=ceiling,
        end_to_end=end_to_end,
        end_to_end_embed_seconds=embed_seconds,
        neo4j_only=neo4j_only,
        bare=bare,
        episodes=episodes,
        recall=recall,
        superseded=stats.facts_by_status.get("superseded", 0),
        graph_facts=graph_facts,
        graph_episodes=graph_episodes,
    )


def server_info(memory: Memory, run: Run) -> ServerInfo:
    """The Neo4j a run measures: where it is, its version, and the scratch server's settings."""
    options, target, settings = run.options, run.target, run.settings
    version, edition = "unknown", None
    try:
        records = run_query(memory, "server_version")
    except Exception:  # an old or restricted server: the version is only informative
        records = []
    if records:
        version, edition = str(records[0]["version"]), records[0]["edition"]
    scratch = options.server == "scratch"
    return ServerInfo(
        mode=options.server,
        uri=target.uri,
        database=target.database,
        neo4j_version=version,
        neo4j_edition=edition,
        heap=options.heap if scratch else None,
        pagecache=options.pagecache if scratch else None,
        vector_merge_factor=settings.local_neo4j_vector_merge_factor if scratch else None,
        kept=not scratch,
    )


def embedder_info(embedder: Embedder, settings: GraphmemSettings) -> EmbedderInfo:
    inner = getattr(embedder, "inner", embedder)
    backend = getattr(inner, "backend", None)
    return EmbedderInfo(
        model_id=embedder.model_id,
        dimension=embedder.dimension,
        device="cpu" if backend == "onnx" else settings.embedding_device,
        batch_size=getattr(inner, "batch_size", None),
        backend=backend,
    )


def usable_cpus(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int | None:
    """The CPUs this process may use: those of its affinity mask, fewer under a cgroup CPU
    quota (a container's ``--cpus``), rounded up; None where neither is known."""
    try:
        cpus: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count()
    try:
        quota, period = cpu_max.read_text().split()[:2]
        limit = -(-int(quota) // int(period))  # "max 100000" (no quota) raises ValueError
    except (OSError, ValueError):
        return cpus
    return limit if cpus is None else max(1, min(cpus, limit))


def load_average() -> float | None:
    """The machine's 1-minute load average (None where the system does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def machine_info() -> MachineInfo:
    """The machine a run measured on."""
    torch = sys.modules.get("torch")  # loaded by the embedder, if it uses torch
    threads = int(torch.get_num_threads()) if torch is not None else None
    return MachineInfo(
        cpus=usable_cpus(),
        platform=platform.platform(terse=True),
        python=platform.python_version(),
        torch_threads=threads,
    )


def run_bench(options: BenchOptions | None = None, **on: Unpack[RunOn]) -> BenchReport:
    """Run the benchmark and return its report.

    With ``options.server == "scratch"`` (the default) a throwaway local Neo4j is started and
    deleted afterwards; with ``"configured"`` the run uses ``target`` (default: the Neo4j the
    settings name) and leaves its ``bench-...`` namespaces there. ``progress`` receives one
    line per step.
    """
    options = options or BenchOptions()
    with measuring_run(options, **on) as run:
        return _run(options, run)


def _run(options: BenchOptions, run: Run) -> BenchReport:
    settings, say = run.settings, run.say
    started = run.started
    embedder = run.embedder
    prefix = f"bench-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(2)}"
    timed = TimedEmbedder(embedder)
    memory = run.memory(embedder=timed)
    server = server_info(memory, run)
    say(f"Neo4j {server.neo4j_version} at {run.target.uri}; namespaces {prefix}-*")
    pid = run.server_pid
    run.settle("measuring the embedding ceilings")
    # Every ceiling is measured before anything is written, so that no background work of
    # the server (Lucene merges, JIT compilation) takes CPU from the embedder alone.
    sizes = [_prepare_size(embedder, size, options, pid, say) for size in options.sizes]
    backends = None
    if options.backend_texts:
        texts = [fact.text for fact in sizes[0].facts[: options.backend_texts]]
        backends = compare_backends(settings, texts, options.batch_size, say, pid=pid)
    results = []
    if options.warmup_facts:
        _warm_up(memory, embedder, f"{prefix}-warmup", options, say)
    for data in sizes:
        results.append(_bench_size(memory, timed, data, options, prefix, pid, say))
    machine = machine_info()
    return BenchReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        options=options,
        machine=machine,
        server=server,
        embedder=embedder_info(embedder, settings),
        namespace_prefix=prefix,
        sizes=results,
        backends=backends,
        targets=evaluate_targets(results, cpus=machine.cpus) + backend_targets(backends),
    )


__all__ = [
    "embedder_info",
    "load_average",
    "machine_info",
    "run_bench",
    "server_info",
    "usable_cpus",
]
