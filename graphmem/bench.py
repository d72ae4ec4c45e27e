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
"""

from __future__ import annotations

import os
import platform
import re
import secrets
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

from graphmem import __version__, cypher, db
from graphmem._signals import EndingSignals
from graphmem.connection import Neo4jTarget
from graphmem.embeddings import EmbedderWrapper
from graphmem.errors import DatabaseError
from graphmem.settings import GraphmemSettings, load_settings
from graphmem.synthetic import (
    SyntheticFact,
    generate_facts,
    generate_messages,
    generate_queries,
)

if TYPE_CHECKING:
    import neo4j

    from graphmem.embeddings import Embedder, Vectors
    from graphmem.memory import Memory

#: End-to-end ingest must reach this share of the embedding-only ceiling.
E2E_RATIO_TARGET = 0.85
#: Facts per second that writes with precomputed vectors must reach.
NEO4J_ONLY_TARGET = 5_000.0
#: The most milliseconds the recall read transaction may take at the 95th percentile ...
DB_P95_TARGET_MS = 25.0
#: ... in a namespace of at least this many facts.
DB_P95_MIN_FACTS = 100_000

ServerMode = Literal["scratch", "configured"]
R = TypeVar("R")
Progress = Callable[[str], None]


# --- options and report ---------------------------------------------------------------------------
def check_sizes(value: tuple[int, ...]) -> tuple[int, ...]:
    """Distinct positive sizes, smallest first (a size's run then sees the smaller sizes' data
    only)."""
    if not value:
        raise ValueError("give at least one size")
    if any(size < 1 for size in value):
        raise ValueError(f"sizes must be positive, got {value}")
    return tuple(sorted(set(value)))


class ServerOptions(BaseModel):
    """Which Neo4j a measuring run uses: a throwaway local server (``scratch``, with this heap
    and page cache) or the configured one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    server: ServerMode = "scratch"
    heap: str = "2g"
    pagecache: str = "1g"

    @field_validator("heap", "pagecache")
    @classmethod
    def _check_memory(cls, value: str) -> str:
        if not re.fullmatch(r"[1-9][0-9]*[kKmMgG]?", value):
            raise ValueError(f"must be a size such as 512m or 2g, got {value!r}")
        return value.lower()


class BenchOptions(ServerOptions):
    """What to measure, and against which Neo4j."""

    sizes: tuple[int, ...] = (10_000, 100_000)
    queries: int = Field(default=200, ge=1)
    warmup: int = Field(default=20, ge=0)
    #: Facts written (with random vectors, untimed) before the first size, so that the first
    #: measured phase does not pay for a cold server's query planning and JIT compilation.
    #: On a fresh local Neo4j the JIT compiler threads use about as much CPU as the writing
    #: transaction for the first ~20,000 facts, so a shorter warm-up measures the JVM's start.
    warmup_facts: int = Field(default=20_000, ge=0)
    batch_size: int = Field(default=1_000, ge=1, le=10_000)
    k: int = Field(default=10, ge=1, le=200)
    seed: int = 0
    update_share: float = Field(default=0.1, ge=0.0, lt=1.0)
    #: Messages ingested per fact of the size (at least one message).
    episodes_per_fact: float = Field(default=0.1, ge=0.0)

    _check_sizes = field_validator("sizes")(check_sizes)


class CpuUse(BaseModel):
    """CPU seconds a phase used during its timed calls: this process (``client``: validation,
    the driver and, where the phase embeds, the embedder) and, for a throwaway server, the
    Neo4j process; ``server_after_seconds`` is what the server went on to use once the phase
    ended, until it was idle (the Lucene merges the phase's writes left)."""

    client_seconds: float
    server_seconds: float | None = None
    server_after_seconds: float | None = None

    @property
    def seconds(self) -> float | None:
        """Client and server CPU during the timed calls; None when the server's is unknown."""
        if self.server_seconds is None:
            return None
        return self.client_seconds + self.server_seconds


class Throughput(BaseModel):
    """``items`` processed in ``seconds`` of timed work, in ``batches`` calls."""

    items: int
    seconds: float
    batches: int
    cpu: CpuUse | None = None

    @property
    def cpus_busy(self) -> float | None:
        """How many CPUs the client and server kept busy on average during the timed calls."""
        used = self.cpu.seconds if self.cpu else None
        return used / self.seconds if used is not None and self.seconds > 0 else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def per_second(self) -> float:
        return self.items / self.seconds if self.seconds > 0 else 0.0


class Percentiles(BaseModel):
    """Milliseconds."""

    p50: float
    p95: float
    p99: float
    mean: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Percentiles:
        if not values:
            return cls(p50=0.0, p95=0.0, p99=0.0, mean=0.0, max=0.0)
        array = np.asarray(values, dtype=np.float64)
        p50, p95, p99 = np.percentile(array, [50, 95, 99])
        return cls(
            p50=float(p50),
            p95=float(p95),
            p99=float(p99),
            mean=float(array.mean()),
            max=float(array.max()),
        )


class RecallLatency(BaseModel):
    """Recall timings over ``queries`` measured queries (after ``warmup`` unmeasured ones)."""

    queries: int
    warmup: int
    k: int
    total_ms: Percentiles
    embed_ms: Percentiles
    db_ms: Percentiles
    stamp_ms: Percentiles
    db_stamp_ms: Percentiles
    mean_hits: float
    #: Share of queries whose answering fact (the newest version) was among the hits.
    found_share: float
    #: Queries for which the indexes were not enough and recall scored exactly.
    exact_fallbacks: int


class SizeResult(BaseModel):
    """Everything measured at one size."""

    size: int
    updates: int
    messages: int
    #: Phase ("end_to_end", "neo4j_only", "episodes") to namespace.
    namespaces: dict[str, str]
    embedding_ceiling: Throughput
    end_to_end: Throughput
    #: Seconds of ``end_to_end`` spent in the embedder (the rest is validation and Neo4j).
    end_to_end_embed_seconds: float = 0.0
    neo4j_only: Throughput
    episodes: Throughput
    recall: RecallLatency
    #: Facts retired by supersession in the end-to-end namespace (should equal ``updates``).
    superseded: int
    #: Facts and episodes in the whole database while recall ran (all namespaces).
    graph_facts: int
    graph_episodes: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def end_to_end_ratio(self) -> float:
        ceiling = self.embedding_ceiling.per_second
        return self.end_to_end.per_second / ceiling if ceiling > 0 else 0.0


class TargetResult(BaseModel):
    """One target at one size: ``measured`` against ``threshold``."""

    name: str
    size: int
    measured: float
    threshold: float
    comparison: Literal[">=", "<="]
    unit: str
    status: Literal["pass", "fail", "n/a"]
    note: str = ""

    @classmethod
    def check(
        cls,
        name: str,
        size: int,
        measured: float,
        threshold: float,
        comparison: Literal[">=", "<="],
        unit: str,
        *,
        min_size: int = 0,
        caveat: str = "",
    ) -> TargetResult:
        """``measured`` compared with ``threshold``; "n/a" below ``min_size``. A ``caveat``
        says why the figure may mislead; it goes into the note and leaves the status alone."""
        if size < min_size:
            status: Literal["pass", "fail", "n/a"] = "n/a"
        elif comparison == ">=":
            status = _status(measured >= threshold)
        else:
            status = _status(measured <= threshold)
        note = f"applies from {min_size:,} facts" if size < min_size else caveat
        return cls(
            name=name,
            size=size,
            measured=measured,
            threshold=threshold,
            comparison=comparison,
            unit=unit,
            status=status,
            note=note,
        )


class MachineInfo(BaseModel):
    cpus: int | None
    platform: str
    python: str
    torch_threads: int | None = None


class ServerInfo(BaseModel):
    mode: ServerMode
    uri: str
    database: str
    neo4j_version: str
    neo4j_edition: str | None = None
    heap: str | None = None
    pagecache: str | None = None
    #: The throwaway server's vector index merge factor (None: a configured server's, unknown).
    vector_merge_factor: int | None = None
    #: Whether the benchmark's namespaces stay in the database after the run.
    kept: bool

    def describe(self) -> str:
        """``Neo4j 5.26.30 community (throwaway local server at bolt://..., heap 2g, ...)``: the
        version, where it runs and, for a throwaway server, its settings."""
        edition = f" {self.neo4j_edition}" if self.neo4j_edition else ""
        where = "throwaway local server" if self.mode == "scratch" else "configured server"
        settings = "".join(
            f", {name} {value}"
            for name, value in (
                ("heap", self.heap),
                ("page cache", self.pagecache),
                ("vector merge factor", self.vector_merge_factor),
            )
            if value is not None
        )
        return f"Neo4j {self.neo4j_version}{edition} ({where} at {self.uri}{settings})"


class EmbedderInfo(BaseModel):
    model_id: str
    dimension: int
    device: str
    batch_size: int


class BenchReport(BaseModel):
    """The result of :func:`run_bench`; JSON-ready with ``model_dump(mode="json")``."""

    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    options: BenchOptions
    machine: MachineInfo
    server: ServerInfo
    embedder: EmbedderInfo
    namespace_prefix: str
    sizes: list[SizeResult]
    targets: list[TargetResult]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """No target failed (targets that do not apply do not count)."""
        return all(t.status != "fail" for t in self.targets)


# --- targets --------------------------------------------------------------------------------------
def _status(ok: bool) -> Literal["pass", "fail"]:
    return "pass" if ok else "fail"


#: The embedder inside the end-to-end phase shares the CPU with validation and Neo4j, so it
#: should not run faster than the ceiling, which has the CPU to itself. When it takes less than
#: this share of the ceiling's time per text, the ceiling was measured under more contention
#: (CPU steal on a shared VM, another process) and the ratio is flattered.
CEILING_SUSPECT_SHARE = 0.98


def ceiling_caveat(r: SizeResult) -> str:
    """Why ``r``'s end-to-end ratio may be flattered, or "" when nothing suggests it."""
    ceiling, e2e = r.embedding_ceiling, r.end_to_end
    if not (ceiling.items and e2e.items and r.end_to_end_embed_seconds):
        return ""
    inside = r.end_to_end_embed_seconds / e2e.items
    if inside >= CEILING_SUSPECT_SHARE * ceiling.seconds / ceiling.items:
        return ""
    return (
        f"ceiling suspect: {_per_item_ms(ceiling.seconds, ceiling.items)} per text alone, "
        f"{_per_item_ms(r.end_to_end_embed_seconds, e2e.items)} inside end-to-end"
    )


#: A phase that kept at least this share of the machine's CPUs busy was limited by the CPU.
CPU_BOUND_SHARE = 0.9


def cpu_note(throughput: Throughput, target_ms_per_fact: float, cpus: int | None) -> str:
    """For a throughput that missed its target: how busy the CPUs were, and the CPU it used
    per fact against what the target allows on this machine (a fact every
    ``target_ms_per_fact`` with all ``cpus`` busy all the time); "" when either is not known.

    Above the allowance, the phase needs less CPU per fact to pass; within it, the phase left
    CPU time idle (waits, work that did not overlap) that it would need to use."""
    busy, cpu = throughput.cpus_busy, throughput.cpu
    if busy is None or cpu is None or cpu.seconds is None or not cpus or not throughput.items:
        return ""
    used = 1000 * cpu.seconds / throughput.items
    allowed = cpus * target_ms_per_fact
    if used <= allowed:
        return (
            f"{busy:.2f} of {cpus} CPUs busy; {used:.2f} ms CPU per fact is within the "
            f"{allowed:.2f} the target allows, the CPUs were idle part of the time"
        )
    bound = "CPU-bound: " if busy >= CPU_BOUND_SHARE * cpus else ""
    return (
        f"{bound}{busy:.2f} of {cpus} CPUs busy; {used:.2f} ms CPU per fact, the target "
        f"allows {allowed:.2f} at most"
    )


def evaluate_targets(sizes: Sequence[SizeResult], *, cpus: int | None = None) -> list[TargetResult]:
    """The targets at each size: end-to-end at least 0.85 of the embedding ceiling, Neo4j-only
    writes at least 5,000 facts/s, and recall's database p95 at most 25 ms from 100,000 facts.
    A ratio whose ceiling looks measured under more contention than end-to-end says so in its
    note (:func:`ceiling_caveat`); a missed throughput target on a machine of ``cpus`` CPUs
    says how busy they were and what CPU per fact the target allows (:func:`cpu_note`).
    """
    targets = []
    for r in sizes:
        ratio = TargetResult.check(
            "end-to-end / embedding ceiling",
            r.size,
            r.end_to_end_ratio,
            E2E_RATIO_TARGET,
            ">=",
            "ratio",
            caveat=ceiling_caveat(r),
        )
        ceiling = r.embedding_ceiling
        if ratio.status == "fail" and not ratio.note and ceiling.items:
            target_ms = 1000 * ceiling.seconds / ceiling.items / E2E_RATIO_TARGET
            ratio = ratio.model_copy(update={"note": cpu_note(r.end_to_end, target_ms, cpus)})
        writes = TargetResult.check(
            "Neo4j-only writes",
            r.size,
            r.neo4j_only.per_second,
            NEO4J_ONLY_TARGET,
            ">=",
            "facts/s",
        )
        if writes.status == "fail":
            note = cpu_note(r.neo4j_only, 1000 / NEO4J_ONLY_TARGET, cpus)
            writes = writes.model_copy(update={"note": note})
        targets += [
            ratio,
            writes,
            TargetResult.check(
                "recall db p95",
                r.size,
                r.recall.db_ms.p95,
                DB_P95_TARGET_MS,
                "<=",
                "ms",
                min_size=DB_P95_MIN_FACTS,
            ),
        ]
    return targets


# --- markdown -------------------------------------------------------------------------------------
def _count(value: float) -> str:
    return f"{value:,.0f}"


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _measured(target: TargetResult) -> str:
    """The measured figure in its unit's usual rounding, with more decimals where that
    rounding would land on the other side of the threshold than the status (0.8496 against
    at least 0.85 shows as 0.8496, not 0.85, beside FAIL)."""
    if target.unit == "ratio":
        decimals, unit = 2, ""
    elif target.unit == "ms":
        decimals, unit = (1 if target.measured < 100 else 0), " ms"
    else:
        decimals, unit = 0, f" {target.unit}"
    text = f"{target.measured:,.{decimals}f}"
    if target.status != "n/a":
        for more in range(decimals + 1, decimals + 8):
            shown = float(text.replace(",", ""))
            met = (
                shown >= target.threshold
                if target.comparison == ">="
                else shown <= target.threshold
            )
            if met == (target.status == "pass"):
                break
            text = f"{target.measured:,.{more}f}"
    return text + unit


def _threshold(target: TargetResult) -> str:
    sign = "≥" if target.comparison == ">=" else "≤"
    if target.unit == "ratio":
        return f"{sign} {target.threshold:.2f}"
    if target.unit == "ms":
        return f"{sign} {_ms(target.threshold)} ms"
    return f"{sign} {_count(target.threshold)} {target.unit}"


def _table(header: Sequence[str], align: str, rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _per_item_ms(seconds: float, items: int) -> str:
    return f"{1000 * seconds / items:.2f} ms" if items else "-"


def _split(r: SizeResult) -> str:
    """Where end-to-end time went, per fact, beside the two phases that isolate each part."""
    e2e = r.end_to_end
    rest = max(0.0, e2e.seconds - r.end_to_end_embed_seconds)
    return (
        f"end-to-end {_per_item_ms(e2e.seconds, e2e.items)} per fact = "
        f"{_per_item_ms(r.end_to_end_embed_seconds, e2e.items)} embedding + "
        f"{_per_item_ms(rest, e2e.items)} validation and Neo4j; "
        f"ceiling {_per_item_ms(r.embedding_ceiling.seconds, r.embedding_ceiling.items)} "
        f"per text; Neo4j-only {_per_item_ms(r.neo4j_only.seconds, r.neo4j_only.items)} per fact"
    )


def _cpu_ms(seconds: float | None, items: int) -> str:
    return f"{1000 * seconds / items:.2f}" if seconds is not None and items else "-"


def _cpu_section(report: BenchReport) -> list[str]:
    """Where the CPU went in each phase, per item: this process (the embedder included where
    the phase embeds) and the server, during the phase and after it (its merges)."""
    rows = []
    for r in report.sizes:
        for label, phase in (
            ("embedding ceiling", r.embedding_ceiling),
            ("end-to-end", r.end_to_end),
            ("Neo4j-only", r.neo4j_only),
        ):
            cpu = phase.cpu
            if cpu is None:
                continue
            busy = phase.cpus_busy
            rows.append(
                [
                    _count(r.size),
                    label,
                    _cpu_ms(phase.seconds, phase.items),
                    _cpu_ms(cpu.client_seconds, phase.items),
                    _cpu_ms(cpu.server_seconds, phase.items),
                    _cpu_ms(cpu.server_after_seconds, phase.items),
                    f"{busy:.2f}" if busy is not None else "-",
                ]
            )
    if not rows:
        return []
    cpus = report.machine.cpus
    lines = ["", f"CPU per item (ms) on {cpus} CPUs:", ""]
    lines += _table(
        ["facts", "phase", "wall", "client CPU", "server CPU", "server after", "CPUs busy"],
        "rlrrrrr",
        rows,
    )
    lines += [
        "",
        "Client CPU is this process's (validation, the driver and, where the phase embeds, the "
        "embedder); server CPU is the throwaway Neo4j's during the timed calls, and "
        '"server after" what it went on to use once the phase ended, until it was idle (the '
        "Lucene merges the writes left). A phase whose CPUs were all busy can only go faster "
        "with less CPU per fact.",
    ]
    return lines


def targets_table(targets: Sequence[TargetResult]) -> list[str]:
    """The Markdown rows of a report's target checks."""
    return _table(
        ["target", "facts", "measured", "target", "result"],
        "lrrrl",
        [
            [
                t.name,
                _count(t.size),
                _measured(t),
                _threshold(t),
                (t.status.upper() if t.status != "n/a" else "n/a")
                + (f" ({t.note})" if t.note else ""),
            ]
            for t in targets
        ],
    )


def render_markdown(report: BenchReport) -> str:
    """The report as Markdown: set-up, throughput, recall latency, targets."""
    opts, server, embedder, machine = report.options, report.server, report.embedder, report.machine
    threads = f", torch {machine.torch_threads} threads" if machine.torch_threads else ""
    lines = [
        f"# graphmem bench ({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"- machine: {machine.cpus} CPUs{threads}, {machine.platform}, Python {machine.python}",
        f"- {server.describe()}",
        f"- embedder: {embedder.model_id} ({embedder.dimension}-d, {embedder.device}, "
        f"batch {embedder.batch_size})",
        f"- ingest batch {opts.batch_size:,} facts; updates {opts.update_share:.0%}; "
        f"untimed warm-up {opts.warmup_facts:,} facts; seed {opts.seed}; "
        f"graphmem {report.graphmem_version}",
        "",
        "## Ingest throughput",
        "",
    ]
    lines += _table(
        [
            "facts",
            "embedding ceiling (texts/s)",
            "end-to-end (facts/s)",
            "ratio",
            "Neo4j-only (facts/s)",
            "episodes (msgs/s)",
            "superseded",
        ],
        "rrrrrrr",
        [
            [
                _count(r.size),
                _count(r.embedding_ceiling.per_second),
                _count(r.end_to_end.per_second),
                f"{r.end_to_end_ratio:.2f}",
                _count(r.neo4j_only.per_second),
                f"{_count(r.episodes.per_second)} ({_count(r.messages)} msgs)",
                f"{_count(r.superseded)} of {_count(r.updates)}",
            ]
            for r in report.sizes
        ],
    )
    lines.append("")
    for r in report.sizes:
        lines.append(f"- {_count(r.size)} facts: {_split(r)}")
    lines += _cpu_section(report)
    lines += ["", f"## Recall latency (ms, k={opts.k})", ""]
    rows = []
    for r in report.sizes:
        rec = r.recall
        for label, p in (
            ("total", rec.total_ms),
            ("embed", rec.embed_ms),
            ("db", rec.db_ms),
            ("stamp", rec.stamp_ms),
            ("db + stamp", rec.db_stamp_ms),
        ):
            first = label == "total"
            rows.append(
                [
                    _count(r.size) if first else "",
                    f"{rec.queries} after {rec.warmup} warm-up" if first else "",
                    label,
                    _ms(p.p50),
                    _ms(p.p95),
                    _ms(p.p99),
                    _ms(p.max),
                ]
            )
    lines += _table(["facts", "queries", "part", "p50", "p95", "p99", "max"], "rrlrrrr", rows)
    lines.append("")
    for r in report.sizes:
        rec = r.recall
        lines.append(
            f"- {_count(r.size)} facts: {rec.mean_hits:.1f} hits per query, answer found in "
            f"{rec.found_share:.0%}, exact fallback in {rec.exact_fallbacks} of {rec.queries}; "
            f"the database held {_count(r.graph_facts)} facts and "
            f"{_count(r.graph_episodes)} episodes"
        )
    lines += ["", "## Targets", ""]
    lines += targets_table(report.targets)
    lines.append("")
    if server.kept:
        lines.append(
            f"The benchmark's namespaces stay in the configured Neo4j: "
            f"`{report.namespace_prefix}-*`."
        )
    else:
        lines.append("The throwaway Neo4j and its data were deleted after the run.")
    return "\n".join(lines) + "\n"


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
    from graphmem.neo4j_local import process_cpu_seconds

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
    from graphmem.neo4j_local import LocalNeo4jServer

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
    from graphmem.neo4j_local import LocalNeo4jServer

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
    from graphmem.embeddings import SentenceTransformerEmbedder

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
        from graphmem.servers import resolve_target

        target = resolve_target(settings)
    return run(settings, target, say)


def _run(
    options: BenchOptions,
    settings: GraphmemSettings,
    target: Neo4jTarget,
    embedder: Embedder | None,
    say: Progress,
) -> BenchReport:
    from graphmem.memory import Memory

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
    "BenchOptions",
    "BenchReport",
    "SizeResult",
    "TargetResult",
    "evaluate_targets",
    "plan_batches",
    "render_markdown",
    "run_bench",
    "scratch_neo4j",
    "wait_until_idle",
]
