"""The service benchmark's pure parts: the clients' scripts and loop, the checks against what
the database holds, the REST client's reading of answers, the report and the command line
(no Neo4j, no server)."""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from graphmem_bench.bench import serve
from graphmem_bench.bench.report import EmbedderInfo, MachineInfo, ServerInfo
from graphmem_bench.bench.serve import (
    ServeBenchOptions,
    ServeBenchReport,
    cost_checks,
    path_figures,
    run_checks,
)
from graphmem_bench.bench.serve_checks import StoredFact, check_writes
from graphmem_bench.bench.serve_cost import QUIET_ARGS, Alternating, observe_cost, server_args
from graphmem_bench.bench.serve_load import (
    MIX,
    REASON,
    ClientLog,
    OpFailure,
    RestClient,
    Script,
    run_clients,
)
from graphmem_bench.bench.serve_procs import LOOPBACK, ServerProcess, free_ports, serve_command
from graphmem_bench.bench.serve_render import render_serve_markdown
from graphmem_bench.cli.benchmark import bench as bench_command

TEXTS = [f"Fact number {n}." for n in range(10)]
QUESTIONS = ["Who?", "What?", "Where?"]


# --- the scripts ----------------------------------------------------------------------------------
def test_a_script_is_seeded_and_its_texts_are_distinct_past_the_pool() -> None:
    one, same = (Script(1, 3, TEXTS, QUESTIONS, seed=5) for _ in range(2))
    ops = [one.next_op() for _ in range(50)]
    assert ops == [same.next_op() for _ in range(50)]
    assert ops != [Script(1, 3, TEXTS, QUESTIONS, seed=6).next_op() for _ in range(50)]
    texts = [one.next_text() for _ in range(8)]
    # Client 1 of 3 gets the pool's texts 1, 4, 7, then round 2 of them, and so on.
    assert texts[:4] == [
        "Fact number 1.",
        "Fact number 4.",
        "Fact number 7.",
        "Fact number 0. (round 2)",
    ]
    assert len(set(texts)) == 8
    other = Script(2, 3, TEXTS, QUESTIONS, seed=5)
    assert not set(texts) & {other.next_text() for _ in range(8)}


def test_the_scripts_draw_the_mix() -> None:
    script = Script(0, 1, TEXTS, QUESTIONS, seed=0)
    drawn = Counter(script.next_op() for _ in range(20_000))
    for op, share in MIX.items():
        assert drawn[op] / 20_000 == pytest.approx(share, abs=0.02)


# --- the clients ----------------------------------------------------------------------------------
class FakeMemory:
    """Stores facts as the service does (a supersession retires its head); ``fail`` decides,
    per call, whether to fail after storing (``"late"``, as a timed-out request that went
    through) or before (``"early"``)."""

    def __init__(self, fail: Any = None) -> None:
        self.facts: dict[str, StoredFact] = {}
        self.calls = 0
        self.fail = fail or (lambda n: None)

    async def remember(self, ns: str, text: str, head: str | None) -> str:
        await asyncio.sleep(0.001)
        self.calls += 1
        how = self.fail(self.calls)
        if how == "stall":
            await asyncio.sleep(3600)
        if how == "early":
            raise OpFailure("HTTP 503 TransientDatabaseError")
        fact_id = uuid.uuid4().hex
        self.facts[fact_id] = StoredFact(fact_id, ns, text, "active", (head,) if head else ())
        if head is not None:
            self.facts[head] = replace(self.facts[head], status="superseded")
        if how == "late":
            raise httpx.ReadTimeout("late")
        return fact_id

    async def recall(self, ns: str, query: str) -> int:
        await asyncio.sleep(0.001)
        return 2


def _run(memory: FakeMemory, clients: int = 3, duration: float = 0.2) -> list[ClientLog]:
    pool = [f"Pool fact {n}." for n in range(500)]
    scripts = [Script(c, clients, pool, QUESTIONS, seed=1) for c in range(clients)]
    namespaces = [f"p-c{c}" for c in range(clients)]
    logs, seconds = asyncio.run(
        run_clients([memory] * clients, namespaces, scripts, duration, lambda _: None)
    )
    assert seconds >= duration
    return logs


def test_the_clients_run_the_mix_and_keep_their_chains() -> None:
    memory = FakeMemory()
    logs = _run(memory)
    for log in logs:
        assert all(log.times[op] for op in MIX) and not log.failures
        assert len(log.chain) == len(log.times["supersede"]) + 1 and log.chain_known
        assert len(log.acknowledged) == 1 + len(log.times["remember"]) + len(log.times["supersede"])
        assert log.hits == 2 * len(log.times["recall"])
    checks = check_writes(logs, list(memory.facts.values()))
    assert checks.stored_once and checks.one_head_per_chain
    assert checks.acknowledged == checks.stored == len(memory.facts)
    assert checks.client_chains == checks.client_chains_as_acknowledged == 3
    figures = path_figures("in-process", "p-", logs, 0.2, checks)
    assert figures.operations == sum(len(t) for log in logs for t in log.times.values())
    assert figures.failures == {} and figures.mean_hits == 2.0


def test_failed_writes_are_counted_and_their_stored_facts_told_apart() -> None:
    memory = FakeMemory(lambda n: "late" if n % 5 == 0 else "early" if n % 7 == 0 else None)
    logs = _run(memory)
    failures = [f for log in logs for f in log.failures]
    assert failures and {label for _, label in failures} <= {
        "ReadTimeout",
        "HTTP 503 TransientDatabaseError",
    }
    late = sum(label == "ReadTimeout" for _, label in failures)
    checks = check_writes(logs, list(memory.facts.values()))
    # A write that timed out but went through is stored, unacknowledged: counted on its own.
    assert checks.stored_after_failure == late and checks.unexplained == 0
    assert checks.stored_once and checks.one_head_per_chain
    # A client whose supersession failed no longer knows its head, and supersedes no more.
    unknown = [log for log in logs if not log.chain_known]
    assert checks.client_chains == 3 - len(unknown)
    figures = path_figures("rest", "p-", logs, 0.2, checks)
    assert sum(figures.failures.values()) == len(failures)
    assert sum(o.failed for o in figures.ops) == len(failures)
    assert set(figures.failure_examples) == set(figures.failures)
    assert {figures.failure_examples[k] for k in figures.failures if k.endswith("ReadTimeout")} <= {
        "late"
    }


def test_a_stalled_operation_fails_after_the_time_limit() -> None:
    memory = FakeMemory(lambda n: "stall" if n == 6 else None)
    scripts = [Script(c, 2, [f"Pool fact {n}." for n in range(99)], QUESTIONS, 1) for c in range(2)]
    logs, seconds = asyncio.run(
        run_clients([memory] * 2, ["a", "b"], scripts, 0.2, lambda _: None, timeout=0.3)
    )
    assert seconds < 1.0
    failures = [f for log in logs for f in log.failures]
    assert len(failures) == 1 and failures[0][1] == "TimeoutError"
    assert sum(len(log.unconfirmed) for log in logs) == 1


# --- the checks -----------------------------------------------------------------------------------
def _log(ns: str, chain: list[str], others: dict[str, str]) -> ClientLog:
    log = ClientLog(ns)
    log.chain = chain
    log.acknowledged = {**{i: f"text {i}" for i in chain}, **others}
    return log


def _facts() -> list[StoredFact]:
    return [
        StoredFact("a", "n1", "text a", "superseded"),
        StoredFact("b", "n1", "text b", "superseded", ("a",)),
        StoredFact("c", "n1", "text c", "active", ("b",)),
        StoredFact("x", "n1", "text x", "active"),
    ]


def test_the_checks_hold_for_what_was_acknowledged() -> None:
    checks = check_writes([_log("n1", ["a", "b", "c"], {"x": "text x"})], _facts())
    assert checks.stored_once and checks.one_head_per_chain
    assert (checks.acknowledged, checks.stored, checks.chains) == (4, 4, 2)


@pytest.mark.parametrize(
    ("facts", "field", "once", "one_head"),
    [
        (_facts()[:3], "missing", False, True),
        ([*_facts(), _facts()[3]], "duplicated", False, True),
        ([*_facts(), StoredFact("y", "n1", "text x", "active")], "duplicated", False, True),
        ([*_facts()[:3], StoredFact("x", "n2", "text x", "active")], "mismatched", False, True),
        ([*_facts(), StoredFact("z", "n1", "text z", "active")], "unexplained", False, True),
        # A fork: two facts supersede the same one, so its chain has two heads.
        (
            [*_facts(), StoredFact("d", "n1", "text d", "active", ("b",))],
            "unexplained",
            False,
            False,
        ),
        # The head is not the last acknowledged write.
        (
            [*_facts()[:2], replace(_facts()[2], status="superseded"), _facts()[3]],
            "chains",
            True,
            False,
        ),
    ],
)
def test_the_checks_find_what_went_wrong(
    facts: list[StoredFact], field: str, once: bool, one_head: bool
) -> None:
    checks = check_writes([_log("n1", ["a", "b", "c"], {"x": "text x"})], facts)
    assert (checks.stored_once, checks.one_head_per_chain) == (once, one_head), checks
    if field != "chains":
        assert getattr(checks, field) >= 1


# --- the REST client ------------------------------------------------------------------------------
def test_the_rest_client_reads_answers_and_names_failures() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append((request.url.path, body))
        if body.get("text") == "refused":
            return httpx.Response(
                503, json={"error": {"type": "TransientDatabaseError", "message": "x"}}
            )
        if body.get("text") == "broken":
            return httpx.Response(502, text="bad gateway")
        if request.url.path.endswith("/search"):
            return httpx.Response(200, json={"hits": [{}, {}, {}]})
        return httpx.Response(201, json={"id": "f1"})

    async def calls() -> list[Any]:
        async with httpx.AsyncClient(
            base_url="http://x", transport=httpx.MockTransport(handler)
        ) as http:
            client = RestClient(http)
            found: list[Any] = [await client.remember("n", "t", None)]
            found.append(await client.remember("n", "u", "f0"))
            found.append(await client.recall("n", "q"))
            for text in ("refused", "broken"):
                with pytest.raises(OpFailure) as failure:
                    await client.remember("n", text, None)
                found.append(f"{failure.value.label}: {failure.value}")
            return found

    assert asyncio.run(calls()) == [
        "f1",
        "f1",
        3,
        "HTTP 503 TransientDatabaseError: x",
        "HTTP 502: bad gateway",
    ]
    assert seen[0] == ("/v1/namespaces/n/facts", {"text": "t"})
    assert seen[1][1] == {"text": "u", "supersedes": ["f0"], "reason": REASON}
    assert seen[2] == ("/v1/namespaces/n/search", {"query": "q", "k": 10})


# --- the servers ----------------------------------------------------------------------------------
def test_the_servers_listen_on_loopback_only() -> None:
    command = serve_command(8123, key_cache=5.0)
    assert command[command.index("--host") + 1] == LOOPBACK == "127.0.0.1"
    assert command[command.index("--port") + 1] == "8123"
    ports = free_ports(3)
    assert len(set(ports)) == 3


@pytest.mark.parametrize(
    ("code", "traceback", "graceful"),
    [
        (0, False, True),
        (-signal.SIGTERM, False, True),
        (None, False, False),
        (1, False, False),
        (0, True, False),
    ],
)
def test_a_graceful_stop(code: int | None, traceback: bool, graceful: bool) -> None:
    server = ServerProcess(url="u", pid=1, ready_seconds=1.0, exit_code=code, traceback=traceback)
    assert server.graceful is graceful


# --- the report and the command line -------------------------------------------------------------
def _report(fail: bool = False) -> ServeBenchReport:
    memory = FakeMemory()
    logs = _run(memory, clients=2, duration=0.05)
    checks = check_writes(logs, list(memory.facts.values()))
    rest = path_figures("rest", "p-rest-", logs, 0.05, checks, (1.0, 2.0))
    local = path_figures("in-process", "p-local-", logs, 0.05, checks)
    servers = [
        ServerProcess(
            url="http://127.0.0.1:1", pid=1, ready_seconds=4.0, exit_code=-15, stop_seconds=0.3
        ),
        ServerProcess(
            url="http://127.0.0.1:2",
            pid=2,
            ready_seconds=4.5,
            exit_code=1 if fail else 0,
            stop_seconds=0.2,
        ),
    ]
    return ServeBenchReport(
        graphmem_version="0.1.0",
        started_at=datetime(2026, 11, 28, 19, 0, tzinfo=UTC),
        finished_at=datetime(2026, 11, 28, 19, 3, tzinfo=UTC),
        options=ServeBenchOptions(clients=2, duration=0.05, server="configured"),
        machine=MachineInfo(cpus=2, platform="Linux", python="3.11.7"),
        server=ServerInfo(
            mode="configured",
            uri="bolt://x",
            database="neo4j",
            neo4j_version="2026.09.0",
            kept=True,
        ),
        embedder=EmbedderInfo(model_id="m", dimension=384, device="cpu", backend="onnx"),
        namespace_prefix="p",
        key_name="p",
        key_revoked=True,
        servers=servers,
        rest=rest,
        in_process=local,
        checks=run_checks(rest, local, servers, key_revoked=True),
        load_average=1.5,
    )


def test_the_report_renders_and_round_trips_through_json() -> None:
    report = _report()
    assert report.passed and len(report.checks) == 8
    text = render_serve_markdown(report)
    assert "| remember |" in text and "| supersede |" in text and "| PASS |" in text
    assert "2 `graphmem serve` processes on 127.0.0.1 (ready after 4.0, 4.5 s" in text
    assert "load average 1.5 when the run began" in text and "`p-*`" in text
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    assert data["passed"] is True and data["rest"]["ops"][0]["op"] == "remember"
    data.pop("passed")
    assert ServeBenchReport.model_validate(data) == report
    failed = _report(fail=True)
    assert not failed.passed
    assert "| servers stopped gracefully on SIGTERM | FAIL |" in render_serve_markdown(failed)


def test_the_command_passes_the_serve_options(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[ServeBenchOptions] = []
    reports = [_report(), _report(fail=True)]

    def fake(options: ServeBenchOptions, **kwargs: Any) -> ServeBenchReport:
        seen.append(options)
        return reports[len(seen) - 1]

    monkeypatch.setattr(serve, "run_serve_bench", fake)
    args = ["--serve", "--clients", "4", "--duration", "3", "--servers", "3", "--seed", "2"]
    result = CliRunner().invoke(bench_command, [*args, "--server", "configured"])
    assert result.exit_code == 0, result.output
    (options,) = seen
    assert (options.clients, options.duration, options.servers, options.seed) == (4, 3.0, 3, 2)
    assert options.server == "configured"
    # A failed check exits 1 after the report, without --fail-on-miss.
    result = CliRunner().invoke(bench_command, ["--serve", "--json"])
    assert result.exit_code == 1 and seen[-1].clients == 32 and seen[-1].duration == 60.0
    assert seen[-1].servers == 2 and seen[-1].server == "scratch"
    assert "checks failed: servers stopped gracefully on SIGTERM" in result.stderr
    assert json.loads(result.stdout)["passed"] is False


@pytest.mark.parametrize(
    "args",
    [
        ["--serve", "--tenants", "2x2"],
        ["--serve", "--mcp"],
        ["--serve", "--clients", "0"],
        ["--serve", "--duration", "0.5"],
    ],
)
def test_the_command_refuses_bad_serve_options(args: list[str]) -> None:
    result = CliRunner().invoke(bench_command, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


# --- the cost of the access log and metrics -----------------------------------------------------
def test_half_the_servers_run_quiet() -> None:
    assert server_args(4) == [(), QUIET_ARGS, (), QUIET_ARGS]
    command = serve_command(8123, key_cache=5.0, extra=QUIET_ARGS)
    assert command[-4:] == ["--log-level", "off", "--metrics", "off"]


class Timed:
    """A client whose every call takes ``ms``."""

    def __init__(self, ms: float) -> None:
        self.ms, self.calls = ms, 0

    async def remember(self, ns: str, text: str, head: str | None) -> str:
        self.calls += 1
        await asyncio.sleep(self.ms / 1000)
        return "f"

    async def recall(self, ns: str, query: str) -> int:
        return int(await self.remember(ns, query, None) == "f")


def test_a_client_alternates_and_the_cost_compares_the_two_halves() -> None:
    observed, quiet = Timed(30), Timed(10)
    client = Alternating(observed, quiet)

    async def go() -> None:
        for _ in range(4):
            await client.recall("n", "q")
            await client.remember("n", "t", None)
            await client.remember("n", "t", "head")

    asyncio.run(go())
    assert observed.calls == quiet.calls == 6
    assert [len(client.times[q]["recall"]) for q in (False, True)] == [2, 2]
    assert [len(client.times[q]["supersede"]) for q in (False, True)] == [2, 2]
    cost = observe_cost([client])
    assert cost.observed_p50 > cost.quiet_p50 >= 10
    assert cost.ratio > 1.05
    (check,) = cost_checks(cost)
    assert not check.passed and not cost.passed and "recall" in check.detail
    assert cost_checks(None) == []
    even = Alternating(Timed(10), Timed(10))
    even.times[False]["recall"] = [10.2] * 5
    even.times[True]["recall"] = [10.0] * 5
    assert observe_cost([even]).passed
    report = _report().model_copy(update={"observe_cost": cost})
    text = render_serve_markdown(report)
    assert "## The access log's and metrics' cost" in text and "| all operations |" in text


def test_the_command_passes_observe_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[ServeBenchOptions] = []

    def fake(options: ServeBenchOptions, **kwargs: Any) -> ServeBenchReport:
        seen.append(options)
        return _report()

    monkeypatch.setattr(serve, "run_serve_bench", fake)
    result = CliRunner().invoke(bench_command, ["--serve", "--observe-cost", "--duration", "2"])
    assert result.exit_code == 0, result.output
    assert seen[-1].observe_cost is True
    result = CliRunner().invoke(bench_command, ["serve", "--observe-cost", "--duration", "2"])
    assert result.exit_code == 0, result.output
    assert seen[-1].observe_cost is True
