"""``graphmem bench``: ingest throughput and recall latency on synthetic memories."""

from __future__ import annotations

import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from graphmem.cli.plugins import json_option, memory_size, print_report, writable_dir

if TYPE_CHECKING:
    pass

#: The most facts one size may ask for (10M facts take days to embed on a CPU).
MAX_SIZE = 10_000_000


def _parse_size(text: str) -> int:
    """A whole number of facts: ``10000``, ``1e4``, ``10k`` or ``1.5k``, not ``1.5``."""
    cleaned = text.strip().lower().replace("_", "").replace(",", "")
    factor = 1
    if cleaned.endswith("k"):
        cleaned, factor = cleaned[:-1], 1_000
    elif cleaned.endswith("m"):
        cleaned, factor = cleaned[:-1], 1_000_000
    try:
        number = Decimal(cleaned) * factor  # exact: 1.1k is 1,100, not 1,100.0000000000002
    except InvalidOperation:
        raise ValueError(text) from None
    if not number.is_finite() or not 1 <= number <= MAX_SIZE or number != int(number):
        raise ValueError(text)
    return int(number)


def _sizes(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    """``10000,100000`` or ``10k,100k`` to a tuple of fact counts."""
    try:
        sizes = tuple(_parse_size(part) for part in value.split(",") if part.strip())
    except ValueError:
        sizes = ()
    if not sizes:
        raise click.BadParameter(
            f"{value!r} is not a list of counts from 1 to {MAX_SIZE:,} such as 10000,100000"
        )
    return sizes


def _shape(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    """``1000x1000`` (or ``1kx1k``) to (namespaces, facts per namespace)."""
    if value is None:
        return None
    parts = value.lower().split("x")
    try:
        if len(parts) != 2:
            raise ValueError(value)
        namespaces, facts = (_parse_size(part) for part in parts)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not NxM, namespaces times facts per namespace, such as 1000x1000"
        ) from None
    return namespaces, facts


def _size(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """One count of facts: ``100000``, ``100k`` or ``1e5``."""
    try:
        return _parse_size(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a count from 1 to {MAX_SIZE:,} such as 100000 or 100k"
        ) from None


@click.command("bench")
@click.option(
    "--sizes",
    default="10000,100000",
    callback=_sizes,
    show_default=True,
    help="Fact counts to measure, comma-separated (10k and 100k also work).",
)
@click.option(
    "--queries", type=click.IntRange(1, 1_000_000),
    help="Recall queries measured per size (after the warm-up queries): 200 by default, 100 "
    "per namespace and mode with --tenants.",
)  # fmt: skip
@click.option(
    "--warmup", type=click.IntRange(0, 100_000), default=20, show_default=True,
    help="Unmeasured recall queries run first.",
)  # fmt: skip
@click.option(
    "--warmup-facts", type=click.IntRange(0, 10_000_000), default=20_000, show_default=True,
    help="Facts written untimed (random vectors) before the first size, to warm Neo4j up.",
)  # fmt: skip
@click.option(
    "--batch-size", type=click.IntRange(1, 10_000), default=1_000, show_default=True,
    help="Facts per remember_many call (and texts per embed call for the ceiling).",
)  # fmt: skip
@click.option(
    "--backend-texts", type=click.IntRange(0, 1_000_000), default=5_000, show_default=True,
    help="Texts each embedding backend (torch, ONNX float32, ONNX int8) embeds for the "
    "comparison of their speed and vectors; 0 skips it.",
)  # fmt: skip
@click.option(
    "--server",
    type=click.Choice(["scratch", "configured"]),
    default="scratch",
    show_default=True,
    help="scratch: a throwaway local Neo4j, deleted afterwards. configured: the Neo4j of "
    "GRAPHMEM_NEO4J_URI; the benchmark's bench-* namespaces (peer-* namespaces and group_ids "
    "with --peer) stay there.",
)
@click.option(
    "--heap", default="2g", show_default=True, callback=memory_size,
    help="Java heap of the scratch Neo4j.",
)  # fmt: skip
@click.option(
    "--pagecache", default="1g", show_default=True, callback=memory_size,
    help="Page cache of the scratch Neo4j.",
)  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic data.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    callback=writable_dir,
    help="Also write bench-<time>.json and bench-<time>.md into this directory "
    "(peer-graphiti-<time>.* with --peer); checked before the run.",
)
@click.option("--fail-on-miss", is_flag=True, help="Exit with status 1 when a target is missed.")
@json_option("Print JSON instead of the Markdown report (errors too, on stderr).")
@click.option(
    "--peer",
    type=click.Choice(["graphiti"]),
    help="Instead, compare with a peer system on the same Neo4j, facts, vectors and queries: "
    "write throughput, search latency and top-10 overlap (graphiti: graphiti-core, from "
    "graphmem[llm]). --queries, --warmup, --warmup-facts and --batch-size apply to it.",
)
@click.option(
    "--consolidation",
    is_flag=True,
    help="Instead, time a consolidation run: a tenth of the first --sizes value as new facts "
    "(a tenth of them repeating believed ones) among that many believed facts, with the "
    "heuristic proposer, and count LLM calls and prompt tokens through a local stub server.",
)
@click.option(
    "--mcp",
    "mcp_round_trip",
    is_flag=True,
    help="Instead, time search_memories through graphmem mcp (a child process over stdio, "
    "with short ids and with --full-ids) beside AsyncMemory.recall in the same run, among "
    "the first --sizes value of facts (needs graphmem[mcp]).",
)
@click.option(
    "--startup",
    is_flag=True,
    help="Instead, measure each entry point's start as its own process (--help, stats, a "
    "one-shot recall, remember, graphmem mcp to its tools/list and to its first search): "
    "CPU seconds, wall seconds and peak memory, on the ONNX and, when installed, the torch "
    "backend.",
)
@click.option(
    "--runs", type=click.IntRange(1, 50), default=3, show_default=True,
    help="Runs of each command with --startup (the report gives medians).",
)  # fmt: skip
@click.option(
    "--tenants",
    metavar="NxM",
    callback=_shape,
    help="Instead, recall among many namespaces holding near-identical facts: N tenant "
    "namespaces of M facts each, plus a small and a large namespace, all drawn from one pool "
    "of synthetic facts; recall in the small and the large namespace is timed and compared "
    "with an exact cosine ranking of that namespace alone (e.g. 1000x1000).",
)
@click.option(
    "--large", default="100000", show_default=True, callback=_size,
    help="Facts in the large measured namespace with --tenants.",
)  # fmt: skip
@click.option(
    "--small", type=click.IntRange(1, 1_000_000), default=50, show_default=True,
    help="Facts in the small measured namespace with --tenants.",
)  # fmt: skip
@click.option(
    "--pool", type=click.IntRange(1, MAX_SIZE), default=5_000, show_default=True,
    help="Distinct facts the tenants and the small namespace draw from with --tenants "
    "(raised to M or --small when one is larger).",
)  # fmt: skip
@click.option(
    "--serve",
    "serve_load",
    is_flag=True,
    help="Instead, load-test graphmem serve on loopback: --servers processes on free ports "
    "of 127.0.0.1 and --clients concurrent REST clients for --duration seconds mixing "
    "remember, recall and supersede, then the same mix through AsyncMemory in this process; "
    "the report gives p50/p95 per operation on both paths and checks the graph afterwards "
    "(needs graphmem[serve]).",
)
@click.option(
    "--clients", type=click.IntRange(1, 1_024), default=32, show_default=True,
    help="Concurrent clients with --serve (each in a namespace of its own).",
)  # fmt: skip
@click.option(
    "--duration", type=click.FloatRange(1, 3_600), default=60.0, show_default=True,
    help="Seconds of the mix on each path with --serve.",
)  # fmt: skip
@click.option(
    "--servers", type=click.IntRange(1, 16), default=2, show_default=True,
    help="graphmem serve processes with --serve (the clients dealt round-robin over them).",
)  # fmt: skip
def bench(
    sizes: tuple[int, ...],
    queries: int,
    warmup: int,
    warmup_facts: int,
    batch_size: int,
    backend_texts: int,
    server: str,
    heap: str,
    pagecache: str,
    seed: int,
    out: Path | None,
    fail_on_miss: bool,
    as_json: bool,
    peer: str | None,
    consolidation: bool,
    mcp_round_trip: bool,
    startup: bool,
    runs: int,
    tenants: tuple[int, int] | None,
    large: int,
    small: int,
    pool: int,
    serve_load: bool,
    clients: int,
    duration: float,
    servers: int,
) -> None:
    """Measure ingest throughput and recall latency on synthetic memories.

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

    By default a throwaway local Neo4j runs the benchmark and is deleted afterwards, so your
    graph is never touched. Progress goes to stderr; the report (Markdown, or JSON with
    --json) to stdout.

    With --peer graphiti, the same facts (embedded once, no updates) are stored through
    graphmem and, as EntityEdges between EntityNodes, through graphiti-core in the same Neo4j;
    the same queries then run through graphmem's recall and graphiti-core's hybrid edge
    search (BM25 + cosine, RRF, no LLM), both given the precomputed query vectors. Target:
    graphiti-core's search p95 at least 5 times graphmem's recall p95 from 100,000 facts.

    Example:

    \b
        graphmem bench --sizes 2000 --queries 50 --out bench-results

    \b
        graphmem bench --peer graphiti --sizes 10000,100000 --out bench-results/peer

    With --mcp, the same questions go to AsyncMemory.recall (k=10) and, alternating, to the
    search_memories tool of graphmem mcp started over stdio; the report gives the round trip
    p50/p95 of each path and their ratio.

    \b
        graphmem bench --mcp --sizes 10000 --queries 200

    With --consolidation, a namespace of believed facts (the first --sizes value) gets a
    tenth as many new facts, a tenth of which repeat a believed one; the heuristic run over
    them is timed (read, propose, apply) and a dry run through graphiti-core's
    OpenAI-compatible client against a local stub server counts LLM calls and prompt tokens
    per 100 new facts. Target: at most 1 s for 1,000 new facts among 10,000.

    \b
        graphmem bench --consolidation --sizes 10000 --out bench-results

    With --tenants NxM, N namespaces of M facts, a small namespace (--small) and a large one
    (--large) are written through remember_many with precomputed vectors, every fact drawn
    from one pool of distinct synthetic facts (--pool), embedded once, each stored copy's
    vector perturbed a little. Questions about the small and the large namespace's facts then
    go to recall (k=10) twice, with the default options and with the vector index alone and
    no gate; the report gives database and client time percentiles, the share of queries
    whose top 10 holds the top 5 of an exact cosine ranking of that namespace alone, how many
    recalls widened their search or scored exactly, and the Neo4j version.

    \b
        graphmem bench --tenants 1000x1000 --large 100000 --queries 100 --out bench-results

    With --serve, --servers graphmem serve processes start on free ports of 127.0.0.1
    against the run's Neo4j, with one write key for the run's fresh namespaces; --clients
    concurrent REST clients, spread round-robin over the servers and each in a namespace of
    its own, run a seeded mix of 40% remember, 40% recall and 20% supersede (of the client's
    chain head) for --duration seconds. The servers then get SIGTERM and the key is revoked,
    and the same mix runs as long through AsyncMemory in this process with as many clients.
    After each, the graph is read directly: no operation may fail, every acknowledged write
    must be stored exactly once, and each supersession chain must have one active head; a
    failed check exits with status 1 (after the report).

    \b
        graphmem bench --serve --server configured --clients 32 --duration 60 --servers 2
    """
    from graphmem import load_settings
    from graphmem_bench.bench.peer_report import PeerOptions
    from graphmem_bench.bench.report import BenchOptions

    asked = {
        "startup": startup,
        "mcp": mcp_round_trip,
        "consolidation": consolidation,
        "peer": peer is not None,
        "tenants": tenants is not None,
        "serve": serve_load,
    }
    kinds = [name for name, given in asked.items() if given]
    if len(kinds) > 1:
        raise click.UsageError(
            "--consolidation, --peer, --mcp, --startup, --tenants and --serve are different "
            "benchmarks"
        )
    kind = kinds[0] if kinds else "speed"
    common: dict[str, Any] = {
        "sizes": sizes,
        "queries": queries or 200,
        "warmup": warmup,
        "warmup_facts": warmup_facts,
        "batch_size": batch_size,
        "seed": seed,
        "server": "configured" if server == "configured" else "scratch",
        "heap": heap,
        "pagecache": pagecache,
    }
    options: Any
    if tenants is not None:
        from pydantic import ValidationError

        from graphmem_bench.bench.tenants import TenantsOptions

        try:
            options = TenantsOptions(
                namespaces=tenants[0],
                facts=tenants[1],
                large=large,
                small=small,
                pool=pool,
                queries=queries or 100,
                **{name: common[name] for name in ("warmup", *_RUN_FIELDS)},
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
            )
            raise click.UsageError(f"--tenants: {problems}") from None
    elif serve_load:
        from graphmem_bench.bench.serve import ServeBenchOptions

        options = ServeBenchOptions(
            clients=clients,
            duration=duration,
            servers=servers,
            **{name: common[name] for name in ("seed", "server", "heap", "pagecache")},
        )
    elif peer is None:
        options = BenchOptions(backend_texts=backend_texts, **common)
    else:
        options = PeerOptions(peer=peer, **common)
    if options.server == "configured":
        kept = "bench-* namespaces" if peer is None else "peer-* namespaces and group_ids"
        click.echo(
            f"graphmem bench: writing into the configured Neo4j; the {kept} stay there afterwards",
            err=True,
        )
    report, markdown = _KINDS[kind](options, runs, load_settings())
    prefix = {"speed": "bench", "peer": f"peer-{peer}"}.get(kind, kind)
    stem = f"{prefix}-{report.started_at:%Y%m%dT%H%M%SZ}"
    # A failed check of --serve (an error, a lost write) is a fault, not a missed target.
    _emit(report, markdown, stem, out, as_json, (fail_on_miss and kind != "mcp") or serve_load)


def _speed(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.render import render_markdown
    from graphmem_bench.bench.runner import run_bench

    report = run_bench(options, settings=settings, progress=_say)
    return report, render_markdown(report)


def _peer(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.peer_graphiti import run_peer_bench
    from graphmem_bench.bench.peer_report import render_peer_markdown

    report = run_peer_bench(options, settings=settings, progress=_say)
    return report, render_peer_markdown(report)


def _consolidation(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.consolidation import (
        ConsolidationBenchOptions,
        render_consolidation_markdown,
        run_consolidation_bench,
    )

    size = options.sizes[0]
    run_options = ConsolidationBenchOptions(
        facts=size, new=max(size // 10, 1), **_fields(options, *_RUN_FIELDS)
    )
    report = run_consolidation_bench(run_options, settings=settings, progress=_say)
    return report, render_consolidation_markdown(report)


def _mcp(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.mcp import McpBenchOptions, render_mcp_markdown, run_mcp_bench

    run_options = McpBenchOptions(
        facts=options.sizes[0],
        queries=options.queries,
        warmup=options.warmup,
        **_fields(options, *_RUN_FIELDS),
    )
    report = run_mcp_bench(run_options, settings=settings, progress=_say)
    return report, render_mcp_markdown(report)


def _tenants(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.tenants import render_tenants_markdown, run_tenants_bench

    report = run_tenants_bench(options, settings=settings, progress=_say)
    return report, render_tenants_markdown(report)


def _serve(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.serve import run_serve_bench
    from graphmem_bench.bench.serve_render import render_serve_markdown

    report = run_serve_bench(options, settings=settings, progress=_say)
    return report, render_serve_markdown(report)


def _startup(options: Any, runs: int, settings: Any) -> tuple[Any, str]:
    from graphmem_bench.bench.startup import (
        StartupOptions,
        render_startup_markdown,
        run_startup_bench,
    )

    run_options = StartupOptions(runs=runs, **_fields(options, "server", "heap", "pagecache"))
    report = run_startup_bench(run_options, settings=settings, progress=_say)
    return report, render_startup_markdown(report)


#: What the consolidation and MCP benchmarks take from the command's options as they are.
_RUN_FIELDS = ("seed", "batch_size", "server", "heap", "pagecache")
#: Each benchmark the command runs: its options from the command's, its report and Markdown.
_KINDS: dict[str, Callable[[Any, int, Any], tuple[Any, str]]] = {
    "speed": _speed,
    "peer": _peer,
    "consolidation": _consolidation,
    "mcp": _mcp,
    "startup": _startup,
    "tenants": _tenants,
    "serve": _serve,
}


def _fields(options: Any, *names: str) -> dict[str, Any]:
    return {name: getattr(options, name) for name in names}


def _say(line: str) -> None:
    click.echo(f"[bench] {line}", err=True)


def _emit(
    report: Any, markdown: str, stem: str, out: Path | None, as_json: bool, fail_on_miss: bool
) -> None:
    """Print the report, write its files, and exit 1 on a missed target if asked."""
    data = report.model_dump(mode="json")
    print_report(data, markdown, as_json=as_json, out=out, stem=stem, say=_say)
    if fail_on_miss and not report.passed:
        checks = getattr(report, "checks", None)
        if checks:
            failed = ", ".join(check.name for check in checks if not check.passed)
            click.echo(f"Error: checks failed: {failed}", err=True)
            sys.exit(1)
        targets = getattr(report, "targets", None)
        missed = (
            ", ".join(
                t.name + (f" at {t.size:,} facts" if t.size else "")
                for t in targets
                if t.status == "fail"
            )
            if targets
            else f"the {stem.split('-')[0]} target"
        )
        click.echo(f"Error: targets missed: {missed}", err=True)
        sys.exit(1)
