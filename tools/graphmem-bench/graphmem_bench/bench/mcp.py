"""The MCP benchmark: what a search costs through ``graphmem mcp`` beside the same recall
called directly.

In a fresh namespace, ``facts`` synthetic facts are stored (embedded, with their updates as
supersessions). Then the same questions run, one after the other and alternating so that
both see the same server state: ``AsyncMemory.recall(k=10)`` in this process, and the
``search_memories`` tool through ``graphmem mcp`` started as a host starts it (a child process
over stdio, the SDK's own client), once with short ids (the default: one more read to check
each prefix) and once with ``--full-ids``. Each figure is the wall-clock round trip seen by
the caller; warm-up calls run first and are not counted.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from typing import Any, Unpack

from pydantic import BaseModel, ConfigDict, Field

from graphmem import __version__
from graphmem.testing import ServerOptions
from graphmem_bench.bench.report import MachineInfo, Percentiles
from graphmem_bench.bench.runner import machine_info
from graphmem_bench.bench.startup import child_env
from graphmem_bench.bench.synthetic import generate_facts, generate_queries
from graphmem_bench.bench.timing import fact_item, plan_batches
from graphmem_bench.run import Run, RunOn, measuring_run


class McpBenchOptions(ServerOptions):
    """What the MCP benchmark stores, how many searches it times, on which Neo4j."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    facts: int = Field(default=10_000, ge=1, le=1_000_000)
    queries: int = Field(default=200, ge=1)
    warmup: int = Field(default=20, ge=0)
    seed: int = 0
    batch_size: int = Field(default=1_000, ge=1)


class McpBenchReport(BaseModel):
    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    options: McpBenchOptions
    machine: MachineInfo
    transport: str = "stdio"
    #: Round trips in milliseconds, by path: direct, mcp (short ids), mcp_full_ids.
    latency: dict[str, Percentiles]
    #: Mean results per search through MCP (the same queries as the direct recalls).
    mean_results: float
    #: The same through AsyncMemory.recall: MCP must return what the library does.
    direct_results: float = 0.0


def run_mcp_bench(options: McpBenchOptions | None = None, **on: Unpack[RunOn]) -> McpBenchReport:
    """Run the MCP benchmark (on a throwaway Neo4j unless ``options.server`` is
    ``configured``) and return its report."""
    options = options or McpBenchOptions()
    with measuring_run(options, **on) as run:
        return asyncio.run(_run(options, run))


async def _run(options: McpBenchOptions, run: Run) -> McpBenchReport:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    say, started = run.say, run.started
    facts = generate_facts(options.facts, seed=options.seed)
    questions = [q.text for q in generate_queries(facts, options.warmup + options.queries)]
    ns = f"bench-mcp-{started:%Y%m%dT%H%M%SZ}"
    timings: dict[str, list[float]] = {"direct": [], "mcp": [], "mcp_full_ids": []}
    results = direct = 0
    async with run.async_memory(ns=ns) as memory:
        say(f"storing {len(facts):,} synthetic facts in {ns}")
        ids: dict[int, str] = {}
        for batch in plan_batches(facts, options.batch_size):
            stored = await memory.remember_many([fact_item(facts[i], ids) for i in batch])
            ids.update(zip(batch, (fact.id for fact in stored), strict=True))
        say("starting graphmem mcp twice (short ids, --full-ids) over stdio")
        env = child_env(run.settings, run.target)
        async with AsyncExitStack() as stack:
            clients = {}
            for name, extra in (("mcp", []), ("mcp_full_ids", ["--full-ids"])):
                params = StdioServerParameters(
                    command=sys.executable,
                    args=["-m", "graphmem", "mcp", "--namespace", ns, *extra],
                    env=env,
                )
                clients[name] = await stack.enter_async_context(Client(params))
            calls: dict[str, Callable[[str], Awaitable[Any]]] = {
                "direct": lambda q: memory.recall(q, k=10)
            }
            calls.update({name: _searcher(client) for name, client in clients.items()})
            say(f"{options.warmup} warm-up and {options.queries} timed searches on each path")
            for n, question in enumerate(questions):
                for name, call in calls.items():
                    began = time.perf_counter()
                    answer = await call(question)
                    elapsed = (time.perf_counter() - began) * 1000
                    if n < options.warmup:
                        continue
                    timings[name].append(elapsed)
                    if name == "direct":
                        direct += len(answer.hits)
                    if name == "mcp":
                        if answer.is_error:
                            raise RuntimeError(f"search_memories failed: {answer.content}")
                        results += len(json.loads(answer.content[0].text)["results"])
    return McpBenchReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        options=options,
        machine=machine_info(),
        latency={name: Percentiles.of(values) for name, values in timings.items()},
        mean_results=results / max(options.queries, 1),
        direct_results=direct / max(options.queries, 1),
    )


def _searcher(client: Any) -> Callable[[str], Awaitable[Any]]:
    def search(question: str) -> Awaitable[Any]:
        return client.call_tool("search_memories", {"query": question})  # type: ignore[no-any-return]

    return search


def render_mcp_markdown(report: McpBenchReport) -> str:
    """The report as a short Markdown page."""
    direct = report.latency["direct"]
    lines = [
        f"# graphmem MCP round trip ({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"{report.options.facts:,} facts, {report.options.queries} timed searches after "
        f"{report.options.warmup} warm-up ones, k=10, transport {report.transport}; "
        f"{report.machine.cpus} CPUs. Mean results per search: {report.mean_results:.1f}.",
        "",
        "| path | p50 ms | p95 ms | mean ms | p50 vs direct |",
        "|---|---|---|---|---|",
    ]
    names = {
        "direct": "AsyncMemory.recall (direct)",
        "mcp": "search_memories over MCP",
        "mcp_full_ids": "search_memories over MCP, --full-ids",
    }
    for key, label in names.items():
        p = report.latency[key]
        ratio = p.p50 / direct.p50 if direct.p50 else 0.0
        lines.append(f"| {label} | {p.p50:.1f} | {p.p95:.1f} | {p.mean:.1f} | {ratio:.2f}x |")
    return "\n".join(lines) + "\n"
