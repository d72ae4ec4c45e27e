"""The service benchmark (``graphmem bench serve``): a bounded load test of ``graphmem
serve`` on loopback, beside the same load through the in-process client.

The benchmark starts ``servers`` ``graphmem serve`` processes on free ports of 127.0.0.1
against the Neo4j of the run, creates one write key for a fresh namespace prefix, and runs
``clients`` concurrent clients (asyncio, ``httpx.AsyncClient``) for ``duration`` seconds, the
clients spread round-robin over the servers, each in a namespace of its own, mixing remember,
recall and supersede (:mod:`~graphmem_bench.bench.serve_load`). The servers are then stopped
with SIGTERM and the key revoked. The same mix (the same seeded scripts, in fresh namespaces)
then runs as long through one :class:`~graphmem.AsyncMemory` in this process, with as
many concurrent clients. After each, the database is read directly
(:mod:`~graphmem_bench.bench.serve_checks`): no operation may have failed, every acknowledged
write must be stored exactly once, and each supersession chain must have one active head.
The report gives each operation's count and p50/p95 on both paths, and the checks. With
``observe_cost``, half the servers run without their access log and metrics, and the report
compares the two halves' p50 (:mod:`~graphmem_bench.bench.serve_cost`).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Unpack

import httpx
from pydantic import BaseModel, ConfigDict, Field, computed_field

from graphmem import __version__
from graphmem.testing import Progress, ServerOptions
from graphmem_bench.bench.report import EmbedderInfo, MachineInfo, Percentiles, ServerInfo
from graphmem_bench.bench.runner import embedder_info, load_average, machine_info, server_info
from graphmem_bench.bench.serve_checks import WriteChecks, check_writes, stored_facts
from graphmem_bench.bench.serve_cost import (
    MAX_COST,
    Alternating,
    ObserveCost,
    observe_cost,
    server_args,
)
from graphmem_bench.bench.serve_load import (
    OP_TIMEOUT_S,
    OPS,
    Client,
    ClientLog,
    DirectClient,
    Op,
    RestClient,
    Script,
    failure_counts,
    failure_examples,
    latencies,
    run_clients,
)
from graphmem_bench.bench.serve_procs import ServerProcess, serve_processes
from graphmem_bench.bench.startup import child_env
from graphmem_bench.bench.synthetic import generate_facts, generate_queries
from graphmem_bench.run import Run, RunOn, measuring_run

if TYPE_CHECKING:
    from graphmem import Memory

#: Distinct synthetic texts the clients' writes are dealt from, and the questions they ask.
POOL_FACTS = 20_000
QUESTIONS = 2_000
#: httpx's own limit per request, a little above the clients' limit per operation
#: (OP_TIMEOUT_S; the server answers 504 after its own --timeout, 60 s by default).
HTTP_TIMEOUT_S = OP_TIMEOUT_S + 5

PathName = Literal["rest", "in-process"]


class ServeBenchOptions(ServerOptions):
    """How many clients and servers the service benchmark runs, for how long, on which
    Neo4j."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    clients: int = Field(default=32, ge=1, le=1_024)
    #: Seconds of the mix on each path.
    duration: float = Field(default=60.0, gt=0, le=3_600)
    servers: int = Field(default=2, ge=1, le=16)
    #: Seconds each server remembers a checked key (``graphmem serve --key-cache``).
    key_cache: float = Field(default=5.0, ge=0, le=300)
    seed: int = 0
    #: Half the servers (an even number, at least two) without logs and metrics, compared.
    observe_cost: bool = False


class OpFigures(BaseModel):
    """One operation on one path: how many succeeded, how many failed, and their wall times
    (ms) as the client saw them."""

    op: Op
    count: int
    failed: int
    ms: Percentiles


class PathFigures(BaseModel):
    """The mix on one path (REST or in-process)."""

    path: PathName
    namespace_prefix: str
    clients: int
    #: From the start of the mix until its last operation ended.
    seconds: float
    ops: list[OpFigures]
    #: Failures by operation and kind (``recall: HTTP 503 TransientDatabaseError``,
    #: ``remember: ReadTimeout``).
    failures: dict[str, int]
    #: One message of each kind of failure.
    failure_examples: dict[str, str] = {}
    mean_hits: float
    checks: WriteChecks
    #: The machine's 1-minute load average when the clients started and when they ended.
    load_average: tuple[float, float] | None = None

    @property
    def operations(self) -> int:
        return sum(o.count for o in self.ops)

    def op(self, op: Op) -> OpFigures:
        return next(o for o in self.ops if o.op == op)


class Check(BaseModel):
    """One check of the run: what, whether it held, and the figures behind it."""

    name: str
    passed: bool
    detail: str


class ServeBenchReport(BaseModel):
    """The result of :func:`run_serve_bench`; JSON-ready with ``model_dump(mode="json")``."""

    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    options: ServeBenchOptions
    machine: MachineInfo
    server: ServerInfo
    embedder: EmbedderInfo
    namespace_prefix: str
    #: The write key the REST clients used (revoked at the end), by name.
    key_name: str
    key_revoked: bool
    servers: list[ServerProcess]
    rest: PathFigures
    in_process: PathFigures
    checks: list[Check]
    #: The machine's 1-minute load average when the run began (before the servers started).
    load_average: float | None = None
    #: With ``options.observe_cost``: the p50 with the access log and metrics, and without.
    observe_cost: ObserveCost | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Every check held."""
        return all(check.passed for check in self.checks)


def run_serve_bench(
    options: ServeBenchOptions | None = None, **on: Unpack[RunOn]
) -> ServeBenchReport:
    """Run the service benchmark (on a throwaway Neo4j unless ``options.server`` is
    ``configured``, where its ``bench-serve-*`` namespaces stay) and return its report."""
    options = options or ServeBenchOptions()
    with measuring_run(options, **on) as run:
        return _run(options, run)


def _run(options: ServeBenchOptions, run: Run) -> ServeBenchReport:
    settings, target, say, started = run.settings, run.target, run.say, run.started
    began_load = load_average()
    prefix = f"bench-serve-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(2)}"
    embedder = run.embedder
    facts = generate_facts(POOL_FACTS, seed=options.seed, update_share=0.0)
    texts = list(dict.fromkeys(fact.text for fact in facts))
    questions = [q.text for q in generate_queries(facts, QUESTIONS, seed=options.seed)]

    def scripts() -> list[Script]:
        return [
            Script(c, options.clients, texts, questions, options.seed)
            for c in range(options.clients)
        ]

    memory = run.memory()
    server = server_info(memory, run)
    say(f"Neo4j {server.neo4j_version} at {target.uri}; namespaces {prefix}-*")
    key = memory.keys.create(prefix, role="write", prefix=f"{prefix}-")
    count, args = options.servers, None
    pairs: list[Alternating] | None = [] if options.observe_cost else None
    if options.observe_cost:
        count = max(2, count + count % 2)
        args = server_args(count)
    try:
        with serve_processes(
            count, child_env(settings, target), say, key_cache=options.key_cache, args=args
        ) as servers:
            say(f"REST: {options.clients} clients for {options.duration:g} s")
            rest_mix = _mix(
                f"{prefix}-rest-",
                options,
                scripts(),
                lambda: _rest_clients(servers, key.key, options.clients, pairs),
                say,
            )
    finally:
        revoked = any(k.revoked_at is not None for k in memory.keys.revoke(prefix))
    # Read only now: a request that timed out on the client's side has ended by now.
    rest = _checked("rest", f"{prefix}-rest-", rest_mix, memory, say)
    cost = observe_cost(pairs) if pairs is not None else None
    if cost is not None:
        say(f"logs and metrics: {cost.describe()}")
    say(f"in-process: {options.clients} clients for {options.duration:g} s")
    local_mix = _mix(
        f"{prefix}-local-",
        options,
        scripts(),
        lambda: _direct_clients(run, options.clients),
        say,
    )
    in_process = _checked("in-process", f"{prefix}-local-", local_mix, memory, say)
    return ServeBenchReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        options=options,
        machine=machine_info(),
        server=server,
        embedder=embedder_info(embedder, settings),
        namespace_prefix=prefix,
        key_name=prefix,
        key_revoked=revoked,
        servers=servers,
        rest=rest,
        in_process=in_process,
        checks=run_checks(rest, in_process, servers, revoked) + cost_checks(cost),
        load_average=began_load,
        observe_cost=cost,
    )


#: What one path's mix leaves: each client's log, its seconds, and the load average before
#: and after it.
Mix = tuple[list[ClientLog], float, tuple[float, float] | None]


def _mix(
    prefix: str,
    options: ServeBenchOptions,
    scripts: Sequence[Script],
    clients: Callable[[], AbstractAsyncContextManager[list[Client]]],
    say: Progress,
) -> Mix:
    """The mix on one path's clients, each in its namespace ``<prefix>c000`` and on."""
    namespaces = [f"{prefix}c{c:03d}" for c in range(options.clients)]
    before = load_average()

    async def mix() -> tuple[list[ClientLog], float]:
        async with clients() as made:
            return await run_clients(made, namespaces, scripts, options.duration, say)

    logs, seconds = asyncio.run(mix())
    after = load_average()
    return logs, seconds, None if before is None or after is None else (before, after)


def _checked(path: PathName, prefix: str, mix: Mix, memory: Memory, say: Progress) -> PathFigures:
    """One path's figures, its writes checked against the facts the database holds."""
    logs, seconds, loads = mix
    say(f"{path}: reading back the facts of {prefix}*")
    checks = check_writes(logs, stored_facts(memory, prefix))
    return path_figures(path, prefix, logs, seconds, checks, loads)


def path_figures(
    path: PathName,
    prefix: str,
    logs: Sequence[ClientLog],
    seconds: float,
    checks: WriteChecks,
    load: tuple[float, float] | None = None,
) -> PathFigures:
    """One path's figures from its clients' logs and its checks."""
    timed = latencies(logs)
    failures = failure_counts(logs)
    recalls = len(timed["recall"])
    return PathFigures(
        path=path,
        namespace_prefix=prefix,
        clients=len(logs),
        seconds=seconds,
        ops=[
            OpFigures(
                op=op,
                count=len(timed[op]),
                failed=sum(n for kind, n in failures.items() if kind.startswith(f"{op}:")),
                ms=Percentiles.of(timed[op]),
            )
            for op in OPS
        ],
        failures=failures,
        failure_examples=failure_examples(logs),
        mean_hits=sum(log.hits for log in logs) / recalls if recalls else 0.0,
        checks=checks,
        load_average=load,
    )


@asynccontextmanager
async def _rest_clients(
    servers: Sequence[ServerProcess],
    key: str,
    count: int,
    pairs: list[Alternating] | None = None,
) -> AsyncIterator[list[Client]]:
    """One ``httpx.AsyncClient`` per server (a connection for each of its clients), the
    clients dealt round-robin over them; with ``pairs``, over the pairs of servers (even and
    odd), each client alternating between its two, and kept in ``pairs``."""
    share = -(-count // len(servers))
    limits = httpx.Limits(max_connections=share, max_keepalive_connections=share)
    async with AsyncExitStack() as stack:
        https = [
            await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=server.url,
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=HTTP_TIMEOUT_S,
                    limits=limits,
                    trust_env=False,  # loopback: never through a proxy
                )
            )
            for server in servers
        ]
        if pairs is None:
            yield [RestClient(https[c % len(https)]) for c in range(count)]
            return
        for c in range(count):
            n = 2 * (c % (len(https) // 2))
            pairs.append(Alternating(RestClient(https[n]), RestClient(https[n + 1])))
        yield list(pairs)


@asynccontextmanager
async def _direct_clients(run: Run, count: int) -> AsyncIterator[list[Client]]:
    """One :class:`~graphmem.AsyncMemory` for every client, connected first."""
    async with run.async_memory() as memory:
        client = DirectClient(memory)
        yield [client] * count


def run_checks(
    rest: PathFigures,
    in_process: PathFigures,
    servers: Sequence[ServerProcess],
    key_revoked: bool,
) -> list[Check]:
    """The run's checks: for each path, no failed operation, every acknowledged write stored
    once, one head per chain; then the servers' graceful stop and the key's revocation."""
    checks = []
    for figures, label in ((rest, "REST"), (in_process, "in-process")):
        c = figures.checks
        failed = sum(figures.failures.values())
        checks += [
            Check(
                name=f"{label}: no failed operation",
                passed=failed == 0,
                detail=f"{failed:,} failed of {figures.operations + failed:,}"
                + "".join(f"; {kind} x{n:,}" for kind, n in figures.failures.items()),
            ),
            Check(
                name=f"{label}: every acknowledged write stored exactly once",
                passed=c.stored_once,
                detail=f"{c.acknowledged:,} acknowledged, {c.stored:,} stored; missing "
                f"{c.missing}, duplicated {c.duplicated}, mismatched {c.mismatched}, "
                f"unexplained {c.unexplained}; stored after a failed request "
                f"{c.stored_after_failure}",
            ),
            Check(
                name=f"{label}: one active head per supersession chain",
                passed=c.one_head_per_chain,
                detail=f"{c.chains_with_one_head:,} of {c.chains:,} chains; the clients' own "
                f"chains as acknowledged: {c.client_chains_as_acknowledged} of "
                f"{c.client_chains}",
            ),
        ]
    codes = ", ".join(str(s.exit_code) for s in servers)
    checks += [
        Check(
            name="servers stopped gracefully on SIGTERM",
            passed=bool(servers) and all(s.graceful for s in servers),
            detail=f"exit status {codes} (-15: ended by the signal it caught) within "
            f"{max((s.stop_seconds or 0.0) for s in servers):.1f} s; tracebacks "
            f"{sum(s.traceback for s in servers)}",
        ),
        Check(name="key revoked", passed=key_revoked, detail=""),
    ]
    return checks


def cost_checks(cost: ObserveCost | None) -> list[Check]:
    """The check of the access log's and metrics' cost, when it was measured."""
    if cost is None:
        return []
    return [
        Check(
            name=f"logs and metrics cost at most {MAX_COST:.0%} of p50",
            passed=cost.passed,
            detail=cost.describe(),
        )
    ]


__all__ = [
    "Check",
    "OpFigures",
    "PathFigures",
    "ServeBenchOptions",
    "ServeBenchReport",
    "cost_checks",
    "path_figures",
    "run_checks",
    "run_serve_bench",
]
