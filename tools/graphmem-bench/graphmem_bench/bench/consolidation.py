"""The consolidation benchmark: one run over new facts among many believed ones.

In a fresh namespace: ``facts`` synthetic facts are stored (precomputed vectors) and
consolidated once, so that they are the believed graph; then ``new`` facts arrive, of which
``duplicate_share`` repeat a believed fact (half verbatim, half with other case and
punctuation). A dry run through graphiti-core's OpenAI-compatible client against the local
stub server (:mod:`graphmem.testing.llm_stub`, answering every cluster with no operation)
counts LLM calls and prompt tokens; then, once a throwaway server is idle, the heuristic
proposer's run is timed, wall clock, with the read, propose and apply phases (without the tier
pass). Then the namespace's facts get a use history (recorded up to a year ago; a third of them
used since, a few often; one in twenty with the caller's importance) and a run that has
nothing new to rewrite times its tier pass over all of them (most facts move, the worst case),
then the next run's (none move). Targets: the heuristic run over 1,000 new facts among 10,000
within 1 second, and the tier pass over the 11,000 facts within 1 second.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any, Unpack

from pydantic import BaseModel, ConfigDict, Field, computed_field

from graphmem import GraphmemSettings, HeuristicProposer, Memory, __version__
from graphmem.testing import (
    Embedder,
    Neo4jTarget,
    ServerOptions,
    run_query,
    server_version,
)
from graphmem.testing.llm_stub import StubLLMServer
from graphmem_bench.bench.report import MachineInfo
from graphmem_bench.bench.runner import machine_info
from graphmem_bench.bench.synthetic import generate_facts
from graphmem_bench.run import Run, RunOn, measuring_run

#: The heuristic run's wall-clock target, in seconds, for 1,000 new facts among 10,000; and
#: the tier pass's over all of them.
TARGET_SECONDS = 1.0


class ConsolidationBenchOptions(ServerOptions):
    """What the consolidation benchmark stores and on which Neo4j."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    facts: int = Field(default=10_000, ge=1, le=1_000_000)
    new: int = Field(default=1_000, ge=1, le=100_000)
    duplicate_share: float = Field(default=0.1, ge=0.0, le=1.0)
    seed: int = 0
    batch_size: int = Field(default=1_000, ge=1)


class PhaseTimes(BaseModel):
    """Seconds of one run: reading (gate, new facts, neighbours), proposing, applying."""

    total: float
    read: float
    propose: float
    apply: float


class ConsolidationBenchReport(BaseModel):
    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    options: ConsolidationBenchOptions
    machine: MachineInfo
    neo4j_version: str
    initial_seconds: float
    initial_clusters: int
    heuristic: PhaseTimes
    new_facts: int
    clusters: int
    merged: int
    planted_duplicates: int
    review: int
    llm_calls: int
    llm_prompt_tokens: int
    llm_completion_tokens: int
    tier_seconds: float = 0.0
    tier_next_seconds: float = 0.0
    tier_facts: int = 0
    tier_moves: dict[str, int] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def calls_per_100_new(self) -> float:
        return round(100 * self.llm_calls / max(self.new_facts, 1), 2)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def prompt_tokens_per_100_new(self) -> float:
        return round(100 * self.llm_prompt_tokens / max(self.new_facts, 1), 1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """The time target, judged where it applies (1,000 new facts among 10,000)."""
        applies = self.options.facts == 10_000 and self.options.new == 1_000
        return not applies or (
            self.heuristic.total <= TARGET_SECONDS and self.tier_seconds <= TARGET_SECONDS
        )


def _texts(options: ConsolidationBenchOptions) -> tuple[list[str], list[str], int]:
    """The believed facts' texts, the new ones, and how many new ones repeat a believed one."""
    facts = [f.text for f in generate_facts(options.facts + options.new, seed=options.seed)]
    old, fresh = facts[: options.facts], facts[options.facts :]
    rng = random.Random(options.seed + 1)
    planted = int(options.new * options.duplicate_share)
    for i, j in enumerate(rng.sample(range(options.new), planted)):
        copy = rng.choice(old)
        fresh[j] = copy if i % 2 == 0 else copy.lower().rstrip(".") + " !"
    return old, fresh, planted


def run_consolidation_bench(
    options: ConsolidationBenchOptions | None = None, **on: Unpack[RunOn]
) -> ConsolidationBenchReport:
    """Run the consolidation benchmark (on a throwaway Neo4j unless ``options.server`` is
    ``configured``) and return its report."""
    options = options or ConsolidationBenchOptions()
    with measuring_run(options, **on) as bench:
        return _run(options, bench)


def _run(options: ConsolidationBenchOptions, bench: Run) -> ConsolidationBenchReport:
    say, started, embedder = bench.say, bench.started, bench.embedder
    old, fresh, planted = _texts(options)
    say(f"embedding {len(old) + len(fresh):,} synthetic facts")
    vectors = embedder.embed(tuple(old + fresh))
    ns = f"bench-consolidate-{started:%Y%m%dT%H%M%SZ}"
    quiet = bench.settings.model_copy(update={"consolidate_min_new_facts": 1})
    m = bench.memory(settings=quiet, ns=ns, proposer=HeuristicProposer())
    version = server_version(m)
    for start in range(0, len(old), options.batch_size):
        stop = min(start + options.batch_size, len(old))
        m.remember_many(old[start:stop], vectors=vectors[start:stop])
    say(f"stored {len(old):,} facts; consolidating them once")
    # A run takes at most max_new_facts: runs follow one another until none is left.
    initial_seconds, initial_clusters, left = 0.0, 0, True
    while left:
        initial = m.consolidate(force=True)
        say(f"  {initial.new_facts:,} facts consolidated: {initial.timings}")
        initial_seconds += initial.timings.get("total", 0.0)
        initial_clusters += initial.clusters
        left = initial.new_facts > 0
    for start in range(0, len(fresh), options.batch_size):
        stop = min(start + options.batch_size, len(fresh))
        offset = len(old)
        m.remember_many(fresh[start:stop], vectors=vectors[offset + start : offset + stop])
    say(f"{len(fresh):,} new facts ({planted} repeat a believed one); LLM dry run")
    usage = _llm_dry_run(quiet, bench.target, embedder, ns)
    # The writes above leave the throwaway server work (index merges, a checkpoint) that
    # the timed run must not be charged for.
    bench.settle("timing the heuristic run")
    run = m.consolidate(force=True, tiers=False)
    tier_facts = _use_history(m, ns, len(old) + len(fresh), options.seed)
    bench.settle("timing the tier pass")
    tiered = m.consolidate(force=True, tiers=True)
    say("the next tier pass (nothing changed since)")
    steady = m.consolidate(force=True, tiers=True)
    timings: dict[str, Any] = run.timings
    return ConsolidationBenchReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        options=options,
        machine=machine_info(),
        neo4j_version=version,
        initial_seconds=initial_seconds,
        initial_clusters=initial_clusters,
        heuristic=PhaseTimes(
            total=timings.get("total", 0.0),
            read=timings.get("read", 0.0),
            propose=timings.get("propose", 0.0),
            apply=timings.get("apply", 0.0),
        ),
        new_facts=run.new_facts,
        clusters=run.clusters,
        merged=sum(len(a.facts) - 1 for a in run.applied if a.op == "MERGE"),
        planted_duplicates=planted,
        review=len(run.review),
        llm_calls=usage[0],
        llm_prompt_tokens=usage[1],
        llm_completion_tokens=usage[2],
        tier_seconds=tiered.timings.get("tiers", 0.0),
        tier_next_seconds=steady.timings.get("tiers", 0.0),
        tier_facts=tier_facts,
        tier_moves=_moves(tiered.applied),
    )


def _use_history(memory: Any, ns: str, count: int, seed: int) -> int:
    """Gives the ``count`` facts of ``ns`` a use history (see the module), the same for a
    seed; returns how many facts took one."""
    rng = random.Random(seed + 2)
    history = []
    for _ in range(count):
        age = rng.uniform(0, 365)
        used = rng.random() < 1 / 3
        history.append(
            {
                "age": age,
                "idle": rng.uniform(0, age) if used else None,
                "uses": min(int(rng.paretovariate(1.2)), 200) if used else 0,
                "importance": round(rng.uniform(0.3, 1.0), 2) if rng.random() < 0.05 else None,
            }
        )
    (row,) = run_query(memory, "bench_access_history", ns=ns, rows=history)
    facts: int = row["facts"]
    return facts


def _moves(applied: Any) -> dict[str, int]:
    """Tier moves by the tier they went to."""
    moves: dict[str, int] = {}
    for op in applied:
        if op.op in ("PROMOTE", "DEMOTE"):
            key = f"{op.before} -> {op.tier}"
            moves[key] = moves.get(key, 0) + 1
    return moves


def _llm_dry_run(
    settings: GraphmemSettings, target: Neo4jTarget, embedder: Embedder, ns: str
) -> tuple[int, int, int]:
    """A dry run through the LLM proposer against the stub server: calls and tokens."""

    def keep_all(_: dict[str, Any]) -> dict[str, Any]:
        return {"reasoning": "nothing to change", "operations": []}

    with StubLLMServer(keep_all) as stub:
        llm = settings.model_copy(
            update={"llm": "openai-compatible:bench-stub", "llm_base_url": stub.base_url}
        )
        with Memory(llm, target=target, embedder=embedder, ns=ns) as memory:
            result = memory.consolidate(force=True, dry_run=True)
    usage = result.usage
    return usage.calls, usage.prompt_tokens, usage.completion_tokens


def render_consolidation_markdown(report: ConsolidationBenchReport) -> str:
    """The report as Markdown."""
    o, h = report.options, report.heuristic
    verdict = "pass" if report.passed else "MISS"
    lines = [
        f"# graphmem consolidation benchmark ({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"graphmem {report.graphmem_version}, Neo4j {report.neo4j_version}, "
        f"{report.machine.cpus} CPUs; {o.new:,} new facts among {o.facts:,} believed ones "
        f"({report.planted_duplicates} repeat a believed fact).",
        "",
        "| run | seconds | read | propose | apply | clusters | merged | for review |",
        "|---|---|---|---|---|---|---|---|",
        f"| heuristic, new facts | {h.total:.3f} | {h.read:.3f} | {h.propose:.3f} | "
        f"{h.apply:.3f} | {report.clusters} | {report.merged} | {report.review} |",
        f"| heuristic, the {o.facts:,} believed facts first | {report.initial_seconds:.3f} "
        f"| | | | {report.initial_clusters} | | |",
        "",
        f"Tier pass over {report.tier_facts:,} facts with a use history: "
        f"{report.tier_seconds:.3f} s; moves: "
        + (", ".join(f"{k} {v:,}" for k, v in sorted(report.tier_moves.items())) or "none")
        + f"; the next pass, with nothing changed since: {report.tier_next_seconds:.3f} s.",
        "",
        f"Targets: the heuristic run over 1,000 new among 10,000, and the tier pass, each "
        f"within {TARGET_SECONDS:g} s: **{verdict}**.",
        "",
        f"LLM proposer through the stub server (dry run): {report.llm_calls} calls, "
        f"{report.llm_prompt_tokens:,} prompt tokens; per 100 new facts "
        f"{report.calls_per_100_new} calls and {report.prompt_tokens_per_100_new:,} prompt "
        "tokens (words and punctuation marks, close to a BPE count).",
    ]
    return "\n".join(lines) + "\n"
