"""``graphmem bench``: one subcommand per benchmark (``speed``, ``peer``, ``consolidation``,
``mcp``, ``startup``, ``tenants``, ``serve``), each a small function that reads its options
and hands them to :func:`~graphmem_bench.cli.bench_kinds.measure`. The group still takes the
older flags (``graphmem bench --tenants 1000x1000``) and runs the subcommand they select."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from graphmem.cli.plugins import json_option
from graphmem_bench.cli.bench_kinds import KINDS, measure
from graphmem_bench.cli.bench_options import (
    JSON_HELP,
    OPTIONS,
    option,
    options,
    shape_param,
    sizes_param,
)

# The names the command's tests and older callers use.
_KINDS = KINDS
_sizes = sizes_param

#: The older form's flags that each select a benchmark instead of ``speed``.
SELECTORS = ("peer", "consolidation", "mcp", "startup", "tenants", "serve")


def _older_form(func: Any) -> Any:
    """The group's copies of every option (hidden), for ``graphmem bench --tenants NxM`` and
    the like."""
    func = json_option(JSON_HELP)(func)
    func.__click_params__[-1].hidden = True
    for name in reversed([n for n in OPTIONS if n != "facts"]):
        changes: dict[str, Any] = {"default": None} if name == "queries" else {}
        func = option(name, hidden=True, **changes)(func)
    func = click.option("--peer", type=click.Choice(["graphiti"]), hidden=True)(func)
    func = click.option("--tenants", metavar="NxM", callback=shape_param, hidden=True)(func)
    for flag in ("consolidation", "mcp", "startup", "serve"):
        func = click.option(f"--{flag}", is_flag=True, hidden=True)(func)
    return func


@click.group("bench", invoke_without_command=True)
@_older_form
@click.pass_context
def bench(ctx: click.Context, /, **flags: Any) -> None:
    """Measure graphmem: writes and recall, consolidation, start-up, MCP, many tenants, the
    service under load, and graphiti-core beside graphmem, on synthetic memories.

    Each benchmark is a subcommand (see its --help). By default a throwaway local Neo4j runs
    it and is deleted afterwards, so your graph is never touched. Progress goes to stderr;
    the report (Markdown, or JSON with --json) to stdout.

    Example:

    \b
        graphmem bench speed --sizes 2000 --queries 50 --out bench-results
        graphmem bench tenants 1000x1000 --large 100000 --queries 100

    The older form with flags still works and runs the same subcommand: `graphmem bench`
    alone or with --sizes and the like is `bench speed`, and --consolidation, --mcp,
    --startup, --tenants NxM, --serve and --peer graphiti select the subcommand of that name
    (--consolidation and --mcp take the first --sizes value as --facts):

    \b
        graphmem bench --peer graphiti --sizes 10000,100000 --out bench-results/peer
    """
    if ctx.invoked_subcommand is not None:
        given = [
            name
            for name in flags
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        ]
        if given:
            raise click.UsageError(
                f"put the options after the subcommand: graphmem bench {ctx.invoked_subcommand} "
                "--help lists them"
            )
        return
    command, params = older_call(ctx, flags)
    ctx.invoke(command, **params)


def older_call(ctx: click.Context, flags: dict[str, Any]) -> tuple[click.Command, dict[str, Any]]:
    """The subcommand the older form's ``flags`` select, and its parameters from them."""
    kinds = [name for name in SELECTORS if flags[name]]
    if len(kinds) > 1:
        raise click.UsageError(
            "--consolidation, --peer, --mcp, --startup, --tenants and --serve are different "
            "benchmarks"
        )
    kind = kinds[0] if kinds else "speed"
    command = bench.get_command(ctx, kind)
    assert command is not None
    given = {
        **flags,
        "facts": flags["sizes"][0],
        "system": flags["peer"],
        "shape": flags["tenants"],
        "queries": flags["queries"] or (100 if kind == "tenants" else 200),
    }
    return command, {param.name: given[param.name] for param in command.params if param.name}


@bench.command("speed")
@options(
    "sizes", "queries", "warmup", "warmup_facts", "batch_size", "backend_texts", "seed",
    defaults={"queries": 200},
)  # fmt: skip
def speed(out: Path | None, fail_on_miss: bool, as_json: bool, **given: Any) -> None:
    """Ingest throughput and recall latency.

    For each size, with a fresh namespace per phase and in this order: the embedding-only
    ceiling (texts/s through the embedder alone), end-to-end ingest through remember_many
    (embedding included, updates written as supersessions), episode ingest (a tenth of the
    size, for information), recall latency percentiles (total, query embedding, database
    read, access stamp), and Neo4j-only writes with precomputed vectors (last, so that recall
    does not search their copies of the end-to-end vectors), their batches alternating with
    those of a bare baseline: the same facts, vectors and batches through one plain UNWIND
    ... CREATE statement into a namespace of its own. Before anything is written, the
    model's embedding backends run on the same texts (--backend-texts): torch, ONNX float32
    and ONNX int8, each one's texts/s and the cosine of its vectors to torch's. Targets:
    end-to-end at least 0.75 of the ceiling, Neo4j-only writes at least 5,000 facts/s and at
    least 0.9 of the bare baseline's rate, recall's database p95 at most 25 ms from 100,000
    facts, ONNX int8 at least 2x torch's texts/s with a mean cosine to torch's vectors of at
    least 0.99 (none below 0.97). The ceiling and the write phases also report their CPU per
    fact (this process's and, on the throwaway server, Neo4j's), so that a missed throughput
    target says whether the machine's CPUs were the limit.

    Example:

    \b
        graphmem bench speed --sizes 2000 --queries 50 --out bench-results
    """
    from graphmem_bench.bench.report import BenchOptions

    measure("speed", BenchOptions(**given), out=out, as_json=as_json, fail_on_miss=fail_on_miss)


@bench.command("peer")
@click.argument("system", type=click.Choice(["graphiti"]), default="graphiti", required=False)
@options(
    "sizes", "queries", "warmup", "warmup_facts", "batch_size", "seed",
    defaults={"queries": 200},
)  # fmt: skip
def peer(system: str, out: Path | None, fail_on_miss: bool, as_json: bool, **given: Any) -> None:
    """graphmem beside graphiti-core (needs graphmem[llm]).

    SYSTEM is the peer (graphiti, the default: graphiti-core). The same facts (embedded once, no
    updates) are stored through graphmem and, as EntityEdges between EntityNodes, through
    graphiti-core in the same Neo4j; the same queries then run through graphmem's recall and
    graphiti-core's hybrid edge search (BM25 + cosine, RRF, no LLM), both given the precomputed
    query vectors. The report gives write throughput, search latency and top-10 overlap. Target:
    graphiti-core's search p95 at least 5 times graphmem's recall p95 from 100,000 facts. A
    configured Neo4j keeps the peer-* namespaces and group_ids.

    Example:

    \b
        graphmem bench peer graphiti --sizes 10000,100000 --out bench-results/peer
    """
    from graphmem_bench.bench.peer_report import PeerOptions

    options = PeerOptions(peer=system, **given)
    measure(
        "peer", options, out=out, as_json=as_json, fail_on_miss=fail_on_miss, stem=f"peer-{system}"
    )


@bench.command("consolidation")
@options("facts", "batch_size", "seed")
def consolidation(
    facts: int, out: Path | None, fail_on_miss: bool, as_json: bool, **given: Any
) -> None:
    """A consolidation run among many believed facts.

    A namespace of --facts believed facts gets a tenth as many new facts, a tenth of which
    repeat a believed one; the heuristic run over them is timed (read, propose, apply), and a
    dry run through graphiti-core's OpenAI-compatible client against a local stub server
    counts LLM calls and prompt tokens per 100 new facts. Target: at most 1 s for 1,000 new
    facts among 10,000.

    Example:

    \b
        graphmem bench consolidation --facts 10000 --out bench-results
    """
    from graphmem_bench.bench.report import BenchOptions

    options = BenchOptions(sizes=(facts,), **given)
    measure("consolidation", options, out=out, as_json=as_json, fail_on_miss=fail_on_miss)


@bench.command("mcp")
@options("facts", "queries", "warmup", "batch_size", "seed", fails=False, defaults={"queries": 200})
def mcp(facts: int, out: Path | None, as_json: bool, **given: Any) -> None:
    """The MCP round trip beside a direct recall (needs graphmem[mcp]).

    Among --facts facts, the same questions go to AsyncMemory.recall (k=10) and, alternating,
    to the search_memories tool of graphmem mcp started over stdio as a child process (with
    short ids and with --full-ids); the report gives the round trip p50/p95 of each path and
    their ratio.

    Example:

    \b
        graphmem bench mcp --facts 10000 --queries 200
    """
    from graphmem_bench.bench.report import BenchOptions

    options = BenchOptions(sizes=(facts,), **given)
    measure("mcp", options, out=out, as_json=as_json, fail_on_miss=False)


@bench.command("startup")
@options("runs")
def startup(runs: int, out: Path | None, fail_on_miss: bool, as_json: bool, **given: Any) -> None:
    """What each entry point costs to start, as its own process.

    --help, stats, a one-shot recall, remember, graphmem mcp to its tools/list and to its
    first search: CPU seconds, wall seconds and peak memory (medians over --runs runs), on
    the ONNX and, when installed, the torch backend.

    Example:

    \b
        graphmem bench startup --runs 3 --out bench-results
    """
    from graphmem_bench.bench.report import BenchOptions

    options = BenchOptions(**given)
    measure("startup", options, runs=runs, out=out, as_json=as_json, fail_on_miss=fail_on_miss)


@bench.command("tenants")
@click.argument("shape", metavar="NxM", callback=shape_param)
@options(
    "large",
    "small",
    "pool",
    "queries",
    "warmup",
    "batch_size",
    "seed",
    "versions",
    defaults={"queries": 100},
)
def tenants(
    shape: tuple[int, int],
    out: Path | None,
    fail_on_miss: bool,
    as_json: bool,
    **given: Any,
) -> None:
    """Recall among many tenants that hold near-identical facts.

    N tenant namespaces of M facts, a small namespace (--small) and a large one (--large) are
    written through a bare bulk statement with precomputed vectors, every fact drawn from one
    pool of distinct synthetic facts (--pool), embedded once, each stored copy's vector
    perturbed a little. Questions about the facts of the small and the large namespace and of
    one tenant then go to recall (k=10) twice, with the default options and with the vector
    index alone and no gate; the report gives database and client time percentiles, the share
    of queries whose top 10 holds the top 5 of an exact cosine ranking of that namespace alone,
    how many recalls widened their search or scored exactly, where each recall's time went
    statement by statement, and the Neo4j version. With --neo4j given twice, the run is made on
    each version and the report compares them.

    Example:

    \b
        graphmem bench tenants 1000x1000 --large 100000 --queries 100 --out bench-results
        graphmem bench tenants 300x1000 --neo4j 2026.09.0 --neo4j 5.26.30 --out bench-results
    """
    from pydantic import ValidationError

    from graphmem_bench.bench.tenants_report import TenantsOptions

    try:
        options = TenantsOptions(namespaces=shape[0], facts=shape[1], **given)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise click.UsageError(f"NxM: {problems}") from None
    measure("tenants", options, out=out, as_json=as_json, fail_on_miss=fail_on_miss)


@bench.command("serve")
@options("clients", "duration", "servers", "seed", "observe_cost", fails=False)
def serve(out: Path | None, as_json: bool, **given: Any) -> None:
    """graphmem serve under load, beside the same mix in process (needs graphmem[serve]).

    --servers graphmem serve processes start on free ports of 127.0.0.1 against the run's
    Neo4j, with one write key for the run's fresh namespaces; --clients concurrent REST
    clients, spread round-robin over the servers and each in a namespace of its own, run a
    seeded mix of 40% remember, 40% recall and 20% supersede (of the client's chain head) for
    --duration seconds. The servers then get SIGTERM and the key is revoked, and the same mix
    runs as long through AsyncMemory in this process with as many clients. After each, the
    graph is read directly: no operation may fail, every acknowledged write must be stored
    exactly once, and each supersession chain must have one active head; a failed check
    exits with status 1 (after the report). With --observe-cost, half the servers run with
    --log-level off --metrics off, each client sends its operations in turn to a server of
    each half, and the p50 of the two halves is compared: the access log and metrics may add
    at most 5%.

    Example:

    \b
        graphmem bench serve --server configured --clients 32 --duration 60 --servers 2
        graphmem bench serve --observe-cost --clients 16 --duration 60
    """
    from graphmem_bench.bench.serve import ServeBenchOptions

    measure("serve", ServeBenchOptions(**given), out=out, as_json=as_json, fail_on_miss=True)


__all__ = [
    "bench",
    "consolidation",
    "mcp",
    "older_call",
    "peer",
    "serve",
    "speed",
    "startup",
    "tenants",
]
