"""``graphmem bench``: ingest throughput and recall latency on synthetic memories.

For each size, in one run against one Neo4j, with a fresh namespace per size and phase:

1. **embedding ceiling**: texts per second through ``embedder.embed`` alone, in the ingest
   batch size; the vectors are kept for phase 5. Every size's ceiling is measured first,
   before anything is written, so that no background work of the server runs beside it;
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

Before the first size, an untimed warm-up writes facts (with random vectors), messages and
recalls into a namespace of its own, so that the first measured phase does not pay for a
cold server's query planning and JIT compilation. On the throwaway server, the ceilings and
each of phases 2 to 5 start once the server is idle, so that no phase is charged for the Lucene
merges an earlier step left behind (and the merges a phase leaves are timed by none).

By default the run uses a throwaway local Neo4j in a temporary directory, stopped and deleted
at the end, so nothing touches the configured graph. With ``server="configured"`` it writes
into ``bench-<time>-...`` namespaces of the configured Neo4j, which stay there.

The report's models, its targets and its Markdown are in :mod:`graphmem.bench.report`.
"""

from __future__ import annotations

import os
import platform
import secrets
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from graphmem import __version__
from graphmem._signals import EndingSignals
from graphmem.bench.report import (
    BenchOptions,
    BenchReport,
    CpuUse,
    EmbedderInfo,
    MachineInfo,
    Percentiles,
    RecallLatency,
    ServerInfo,
    ServerOptions,
    SizeResult,
    Throughput,
    evaluate_targets,
)
from graphmem.bench.synthetic import (
    SyntheticFact,
    generate_facts,
    generate_messages,
    generate_queries,
)
from graphmem.embed.embedder import EmbedderWrapper
from graphmem.errors import DatabaseError
from graphmem.servers.connection import Neo4jTarget
from graphmem.settings import GraphmemSettings, load_settings
from graphmem.store import cypher, db

if TYPE_CHECKING:
    import neo4j

    from graphmem.client.memory import Memory
    from graphmem.embed.embedder import Embedder, Vectors


R = TypeVar("R")
Progress = Callable[[str], None]


# --- the run --------------------------------------------------------------------------------------
def plan_batches(facts: Sequence[SyntheticFact], batch_size: int) -> list[list[int]]:
    """Fact indices in write batches of at most ``batch_size``, in order, except that an
    update waits for a later batch when the fact it replaces is not written yet: a batch can
    only supersede facts stored before it."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    written: set[int] = set()
    batches: list[list[int]] = []
    waiting: list[int] = []
    position = 0
    while waiting or position < len(facts):
        batch: list[int] = []
        deferred: list[int] = []
        candidates = iter(waiting)
        while len(batch) < batch_size:
            index = next(candidates, None)
            if index is None:
                if position >= len(facts):
                    break
                index = position
                position += 1
            target = facts[index].updates
            if target is None or target in written:
                batch.append(index)
            else:
                deferred.append(index)
        waiting = deferred + list(candidates)
        written.update(batch)
        batches.append(batch)
    return batches


def _chunks(count: int, size: int) -> Iterator[range]:
    for start in range(0, count, size):
        yield range(start, min(start + size, count))


def _fact_item(fact: SyntheticFact, ids: dict[int, str]) -> dict[str, Any]:
    item: dict[str, Any] = {"text": fact.text, "tags": [fact.topic], "source": "graphmem bench"}
    if fact.updates is not None:
        item["supersedes"] = [ids[fact.updates]]
        item["reason"] = "newer information"
    return item


def _ticker(say: Progress, label: str, total: int, unit: str) -> Callable[[int, float], None]:
    """Reports progress about every tenth of ``total`` (and at the end)."""
    step = max(1, total // 10)
    state = {"next": step}

    def tick(done: int, seconds: float) -> None:
        if done >= state["next"] or done >= total:
            rate = done / seconds if seconds > 0 else 0.0
            say(f"  {label}: {done:,}/{total:,} {unit}, {rate:,.0f}/s")
            while state["next"] <= done:
                state["next"] += step

    return tick


class _TimedEmbedder(EmbedderWrapper):
    """An embedder that adds the seconds its calls take to ``seconds``."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Vectors:
        began = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - began


def _cpu_reader(pid: int | None) -> Callable[[], float | None]:
    """A reader of the CPU seconds process ``pid`` has used so far (None: no such process, or
    not readable here; always None without a pid)."""
    if pid is None:
        return lambda: None
    from graphmem.servers.local import process_cpu_seconds

    return lambda: process_cpu_seconds(pid)


class _Meter:
    """Wall time, this process's CPU time and the throwaway server's (``pid``; None: not
    known) summed over the timed calls of one phase."""

    def __init__(self, pid: int | None) -> None:
        self._server_cpu = _cpu_reader(pid)
        self.seconds = 0.0
        self.client = 0.0
        self.server: float | None = None if pid is None else 0.0

    @contextmanager
    def timing(self) -> Iterator[None]:
        server = self._server_cpu()
        client = time.process_time()
        began = time.perf_counter()
        yield
        self.seconds += time.perf_counter() - began
        self.client += time.process_time() - client
        after = self._server_cpu()
        if self.server is not None and server is not None and after is not None:
            self.server += after - server
        else:
            self.server = None

    def throughput(self, items: int, batches: int) -> Throughput:
        cpu = CpuUse(client_seconds=self.client, server_seconds=self.server)
        return Throughput(items=items, seconds=self.seconds, batches=batches, cpu=cpu)


def _embed_ceiling(
    embedder: Embedder,
    texts: Sequence[str],
    batch_size: int,
    say: Progress,
    *,
    pid: int | None = None,
) -> tuple[Throughput, Vectors]:
    embedder.embed(list(texts[: min(len(texts), 32)]))  # load and warm the model, untimed
    tick = _ticker(say, "embedding ceiling", len(texts), "texts")
    parts = []
    meter = _Meter(pid)
    batches = 0
    for chunk in _chunks(len(texts), batch_size):
        batch = list(texts[chunk.start : chunk.stop])
        with meter.timing():
            parts.append(embedder.embed(batch))
        batches += 1
        tick(chunk.stop, meter.seconds)
    vectors = np.vstack(parts) if parts else np.zeros((0, embedder.dimension), np.float32)
    return meter.throughput(len(texts), batches), vectors


def _write_facts(
    memory: Memory,
    ns: str,
    facts: Sequence[SyntheticFact],
    batches: Sequence[Sequence[int]],
    vectors: Vectors | None,
    label: str,
    say: Progress,
    *,
    pid: int | None = None,
) -> tuple[Throughput, dict[int, str]]:
    ids: dict[int, str] = {}
    tick = _ticker(say, label, len(facts), "facts")
    meter = _Meter(pid)
    for batch in batches:
        items = [_fact_item(facts[i], ids) for i in batch]
        rows = None if vectors is None else vectors[np.asarray(batch, dtype=np.intp)]
        with meter.timing():
            created = memory.remember_many(items, ns=ns, vectors=rows)
        if len(created) != len(batch):
            raise DatabaseError(f"{label}: wrote {len(created)} of {len(batch)} facts")
        ids.update(zip(batch, (fact.id for fact in created), strict=True))
        tick(len(ids), meter.seconds)
    return meter.throughput(len(facts), len(batches)), ids


def _with_tail(throughput: Throughput, server_after: float | None) -> Throughput:
    """``throughput`` with the server CPU its phase left to run after it ended."""
    if throughput.cpu is None:
        return throughput
    cpu = throughput.cpu.model_copy(update={"server_after_seconds": server_after})
    return throughput.model_copy(update={"cpu": cpu})


def _ingest(
    memory: Memory, ns: str, size: int, seed: int, batch_size: int, say: Progress
) -> Throughput:
    messages = generate_messages(size, seed=seed)
    tick = _ticker(say, "episodes", size, "messages")
    seconds = 0.0
    batches = 0
    for chunk in _chunks(len(messages), batch_size):
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
    tick = _ticker(say, "recall", options.queries, "queries")
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
    """Untimed writes, ingest and recalls in their own namespace, through the same calls."""
    count = options.warmup_facts
    say(f"warming up: {count:,} facts with random vectors, messages and recalls in {ns}")
    facts = generate_facts(count, seed=options.seed - 1, update_share=options.update_share)
    rows = np.random.default_rng(options.seed).standard_normal((count, embedder.dimension))
    vectors = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    _write_facts(
        memory, ns, facts, plan_batches(facts, options.batch_size), vectors, "warm-up", say
    )
    _ingest(memory, ns, min(count, 100), options.seed - 1, options.batch_size, say)
    for query in generate_queries(facts, 10, seed=options.seed):
        memory.recall(query.text, ns=ns, k=options.k)


def _graph_counts(driver: neo4j.Driver, database: str) -> tuple[int, int]:
    (record,) = db.execute(driver, database, cypher.query("graph_size"))
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
    ceiling, vectors = _embed_ceiling(
        embedder, [fact.text for fact in facts], options.batch_size, say, pid=pid
    )
    return _SizeData(size, seed, facts, ceiling, vectors)


def _bench_size(
    memory: Memory,
    embedder: _TimedEmbedder,
    driver: neo4j.Driver,
    database: str,
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
        for phase in ("end_to_end", "neo4j_only", "episodes")
    }
    say(f"{size:,} facts ({updates:,} updates), {messages:,} messages")
    batches = plan_batches(facts, options.batch_size)
    # Each timed phase starts once the work the steps before it left is done (_scratch_server_pid).
    _settle(pid, "timing the end-to-end writes", say)
    embedder.seconds = 0.0
    end_to_end, ids = _write_facts(
        memory, namespaces["end_to_end"], facts, batches, None, "end-to-end", say, pid=pid
    )
    embed_seconds = embedder.seconds
    end_to_end = _with_tail(end_to_end, _settle(pid, "timing the episodes", say))
    episodes = _ingest(memory, namespaces["episodes"], messages, seed + 1, options.batch_size, say)
    graph_facts, graph_episodes = _graph_counts(driver, database)
    _settle(pid, "timing recall", say)
    recall = _recall(memory, namespaces["end_to_end"], facts, ids, options, seed + 2, say)
    stats = memory.stats(ns=namespaces["end_to_end"])
    # Last, so that recall above did not search these twins of the end-to-end vectors.
    _settle(pid, "timing the Neo4j-only writes", say)
    neo4j_only, _ = _write_facts(
        memory, namespaces["neo4j_only"], facts, batches, vectors, "Neo4j-only", say, pid=pid
    )
    neo4j_only = _with_tail(neo4j_only, _settle(pid, "measuring the merges they left", say))
    return SizeResult(
        size=size,
        updates=updates,
        messages=messages,
        namespaces=namespaces,
        embedding_ceiling=ceiling,
        end_to_end=end_to_end,
        end_to_end_embed_seconds=embed_seconds,
        neo4j_only=neo4j_only,
        episodes=episodes,
        recall=recall,
        superseded=stats.facts_by_status.get("superseded", 0),
        graph_facts=graph_facts,
        graph_episodes=graph_episodes,
    )


def server_info(
    driver: neo4j.Driver,
    database: str,
    target: Neo4jTarget,
    options: ServerOptions,
    settings: GraphmemSettings,
) -> ServerInfo:
    """The Neo4j a run measures: where it is, its version, and the scratch server's settings."""
    version, edition = "unknown", None
    try:
        records = db.execute(driver, database, cypher.query("server_version"))
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
    return EmbedderInfo(
        model_id=embedder.model_id,
        dimension=embedder.dimension,
        device=settings.embedding_device,
        batch_size=settings.embedding_batch_size,
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


def _machine() -> MachineInfo:
    torch = sys.modules.get("torch")  # loaded by the embedder, if it uses torch
    threads = int(torch.get_num_threads()) if torch is not None else None
    return MachineInfo(
        cpus=usable_cpus(),
        platform=platform.platform(terse=True),
        python=platform.python_version(),
        torch_threads=threads,
    )


#: A throwaway server counts as idle once it used less than this share of one core over one
#: window; the bench waits for that (at most the timeout) before it times anything that a
#: busy server would distort.
IDLE_SHARE = 0.05
IDLE_WINDOW_S = 2.0
IDLE_TIMEOUT_S = 180.0


def wait_until_idle(
    cpu_seconds: Callable[[], float | None],
    *,
    window: float = IDLE_WINDOW_S,
    share: float = IDLE_SHARE,
    timeout: float = IDLE_TIMEOUT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> float | None:
    """Wait until ``cpu_seconds()`` grows by less than ``share * window`` over one ``window``.

    Returns the seconds waited, or None when the CPU time is unknown or the process was still
    busy after ``timeout`` seconds.
    """
    began = clock()
    before = cpu_seconds()
    while before is not None and clock() - began < timeout:
        sleep(window)
        after = cpu_seconds()
        if after is not None and after - before < share * window:
            return clock() - began
        before = after
    return None


def _scratch_server_pid(options: ServerOptions, settings: GraphmemSettings) -> int | None:
    """The process to wait for between phases: the throwaway server of a ``scratch`` run.

    A throwaway server is left to finish its start-up work (JIT compilation, index set-up)
    and the work each step leaves behind (Lucene merges) before the next timed phase, so that
    no phase is charged for work it did not cause. A configured server may be serving others,
    so it is not waited for (None).
    """
    if options.server != "scratch":
        return None
    from graphmem.servers.local import LocalNeo4jServer

    return LocalNeo4jServer(settings).status().pid


def _settle(pid: int | None, when: str, say: Progress) -> float | None:
    """Wait until the throwaway server ``pid`` (None: no such server) is idle, and say so.

    Returns the CPU seconds the server used while it was waited for (None: not known)."""
    if pid is None:
        return None
    cpu_seconds = _cpu_reader(pid)
    before = cpu_seconds()
    waited = wait_until_idle(cpu_seconds)
    if waited is None:
        say(f"the throwaway Neo4j was still busy after {IDLE_TIMEOUT_S:.0f} s; {when} anyway")
    else:
        say(f"the throwaway Neo4j was idle after {waited:.0f} s; {when}")
    after = cpu_seconds()
    return after - before if before is not None and after is not None else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def scratch_neo4j(
    settings: GraphmemSettings, *, heap: str, pagecache: str, say: Progress
) -> Iterator[tuple[GraphmemSettings, Neo4jTarget]]:
    """A local Neo4j in a new temporary home on a free port; stopped and deleted on exit,
    also when the process is ended by SIGTERM or SIGHUP."""
    from graphmem.servers.local import LocalNeo4jServer

    with (
        EndingSignals() as ending,
        tempfile.TemporaryDirectory(prefix="graphmem-bench-", ignore_cleanup_errors=True) as tmp,
    ):
        home = Path(tmp)
        scratch = load_settings(
            **{
                **settings.model_dump(),
                "neo4j_uri": "local",
                "local_neo4j_home": home,
                "local_neo4j_port": _free_port(),
                "local_neo4j_heap": heap,
                "local_neo4j_pagecache": pagecache,
            }
        )
        server = LocalNeo4jServer(scratch)
        say(f"starting a throwaway Neo4j in {home} (heap {heap}, page cache {pagecache})")
        try:
            started = server.start()
            say(f"Neo4j ready at {started.status.uri} after {started.seconds:.0f} s")
            yield scratch, server.target()
        finally:
            ending.defer()  # a signal from here on waits for the server's deletion
            say("stopping the throwaway Neo4j")
            server.stop()


def run_bench(
    options: BenchOptions | None = None,
    *,
    settings: GraphmemSettings | None = None,
    target: Neo4jTarget | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> BenchReport:
    """Run the benchmark and return its report.

    With ``options.server == "scratch"`` (the default) a throwaway local Neo4j is started and
    deleted afterwards; with ``"configured"`` the run uses ``target`` (default: the Neo4j the
    settings name) and leaves its ``bench-...`` namespaces there. ``progress`` receives one
    line per step.
    """
    options = options or BenchOptions()
    return on_server(
        options,
        settings,
        target,
        progress,
        lambda run_settings, run_target, say: _run(
            options, run_settings, run_target, embedder, say
        ),
    )


def load_embedder(settings: GraphmemSettings, embedder: Embedder | None, say: Progress) -> Embedder:
    """``embedder``, or the one the settings name, loaded now (it may take a while)."""
    if embedder is not None:
        return embedder
    from graphmem.embed.embedder import SentenceTransformerEmbedder

    say(f"loading the embedder ({settings.embedding_model or 'default model'})")
    return SentenceTransformerEmbedder.from_settings(settings)


def on_server(
    options: ServerOptions,
    settings: GraphmemSettings | None,
    target: Neo4jTarget | None,
    progress: Progress | None,
    run: Callable[[GraphmemSettings, Neo4jTarget, Progress], R],
) -> R:
    """``run(settings, target, say)`` on the Neo4j ``options`` name: a throwaway local server
    that is deleted afterwards, or ``target`` (default: the Neo4j the settings name).
    ``settings`` default to :func:`load_settings`; ``say`` is ``progress`` or a no-op."""
    settings = settings or load_settings()
    say: Progress = progress or (lambda _line: None)
    if options.server == "scratch":
        if target is not None:
            raise ValueError("a target is only used with server='configured'")
        with scratch_neo4j(settings, heap=options.heap, pagecache=options.pagecache, say=say) as (
            scratch,
            scratch_target,
        ):
            return run(scratch, scratch_target, say)
    if target is None:
        from graphmem.servers.targets import resolve_target

        target = resolve_target(settings)
    return run(settings, target, say)


def _run(
    options: BenchOptions,
    settings: GraphmemSettings,
    target: Neo4jTarget,
    embedder: Embedder | None,
    say: Progress,
) -> BenchReport:
    from graphmem.client.memory import Memory

    started = datetime.now(UTC)
    embedder = load_embedder(settings, embedder, say)
    prefix = f"bench-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(2)}"
    timed = _TimedEmbedder(embedder)
    with Memory(settings, target=target, embedder=timed) as memory:
        driver, database = memory.graph.driver, memory.graph.database
        server = server_info(driver, database, target, options, settings)
        say(f"Neo4j {server.neo4j_version} at {target.uri}; namespaces {prefix}-*")
        pid = _scratch_server_pid(options, settings)
        _settle(pid, "measuring the embedding ceilings", say)
        # Every ceiling is measured before anything is written, so that no background work of
        # the server (Lucene merges, JIT compilation) takes CPU from the embedder alone.
        sizes = [_prepare_size(embedder, size, options, pid, say) for size in options.sizes]
        results = []
        if options.warmup_facts:
            _warm_up(memory, embedder, f"{prefix}-warmup", options, say)
        for data in sizes:
            results.append(
                _bench_size(memory, timed, driver, database, data, options, prefix, pid, say)
            )
    machine = _machine()
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
        targets=evaluate_targets(results, cpus=machine.cpus),
    )


__all__ = [
    "embedder_info",
    "load_embedder",
    "on_server",
    "plan_batches",
    "run_bench",
    "scratch_neo4j",
    "server_info",
    "wait_until_idle",
]
