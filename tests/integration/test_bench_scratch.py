"""The bench and the peer bench on their default throwaway server: started, waited for before
each timed phase, then stopped and deleted."""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from graphmem.embed.embedder import Embedder
from graphmem.servers.local import LocalNeo4jServer
from graphmem.settings import GraphmemSettings, load_settings
from graphmem_bench.bench.peer_graphiti import run_peer_bench
from graphmem_bench.bench.peer_report import PeerOptions, PeerReport
from graphmem_bench.bench.report import BenchOptions, BenchReport
from graphmem_bench.bench.runner import run_bench
from graphmem_bench.bench.tenants import run_tenants_bench
from graphmem_bench.bench.tenants_report import TenantsOptions

# A process that holds a throwaway server until it is told to stop. It takes its settings from
# the environment, so it runs the same Neo4j version as the suite.
# The holder starts with the default handling of SIGTERM and SIGHUP, as a process started from
# a terminal has, whatever the test runner inherited (under nohup, SIGHUP is ignored, and the
# guard rightly leaves an ignored signal alone).
_HOLDER = """
import signal
import time
from graphmem.servers.scratch import scratch_neo4j
from graphmem.settings import load_settings
for signum in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(signum, signal.SIG_DFL)
with scratch_neo4j(load_settings(), heap="512m", pagecache="64m",
                   say=lambda line: print(line, flush=True)):
    print("holding", flush=True)
    time.sleep(600)
"""

# A wait names what it lets start; a server still busy after the time limit is not waited for.
_WAIT = re.compile(r"the throwaway Neo4j was (?:idle|still busy) after \d+ s; (.+?)(?: anyway)?")


def _waits(lines: list[str]) -> list[str]:
    return [match.group(1) for line in lines if (match := _WAIT.fullmatch(line))]


def _first(lines: list[str], pattern: str) -> re.Match[str]:
    return next(m for line in lines if (m := re.match(pattern, line)))


def _assert_server_gone(lines: list[str]) -> None:
    home = Path(_first(lines, r"starting a throwaway Neo4j in (\S+) ").group(1))
    port = int(_first(lines, r"Neo4j ready at bolt://[^:]+:(\d+) ").group(1))
    assert lines[-1] == "stopping the throwaway Neo4j"
    assert not home.exists()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still accepts connections"


@pytest.fixture(scope="module")
def bench(test_settings: GraphmemSettings, embedder: Embedder) -> tuple[BenchReport, list[str]]:
    lines: list[str] = []
    options = BenchOptions(
        sizes=(100,),
        queries=5,
        warmup=1,
        warmup_facts=50,
        batch_size=50,
        heap="512m",
        pagecache="64m",
    )
    return run_bench(
        options, settings=test_settings, embedder=embedder, progress=lines.append
    ), lines


def test_the_bench_waits_for_its_server_before_each_timed_phase(
    bench: tuple[BenchReport, list[str]],
) -> None:
    _, lines = bench
    assert _waits(lines) == [
        "measuring the embedding ceilings",
        "timing the end-to-end writes",
        "timing the episodes",
        "timing recall",
        "timing the Neo4j-only writes and the bare ones",
        "measuring the merges they left",
    ], lines
    # Each wait after the warm-up comes right before its phase's first progress line.
    for wait, phase in (
        ("timing the end-to-end writes", "end-to-end"),
        ("timing the episodes", "episodes"),
        ("timing recall", "recall"),
        ("timing the Neo4j-only writes and the bare ones", "Neo4j-only"),
    ):
        at = next(i for i, line in enumerate(lines) if line.endswith(wait))
        assert lines[at + 1].startswith(f"  {phase}: "), lines[at : at + 2]


def test_the_bench_describes_its_server_then_deletes_it(
    bench: tuple[BenchReport, list[str]],
) -> None:
    report, lines = bench
    assert report.server.mode == "scratch" and not report.server.kept
    assert (report.server.heap, report.server.pagecache) == ("512m", "64m")
    (size,) = report.sizes
    assert size.end_to_end.items == size.neo4j_only.items == 100
    assert size.recall.queries == 5 and size.recall.found_share > 0
    # The CPU of each write phase: this process's and the throwaway server's, during the
    # phase and after it.
    assert size.bare is not None and size.bare.items == 100
    for phase in (size.end_to_end, size.neo4j_only, size.bare):
        assert phase.cpu is not None and phase.cpu.client_seconds > 0
        assert phase.cpu.server_seconds is not None and phase.cpu.server_seconds > 0
    for phase in (size.end_to_end, size.neo4j_only):  # the bare writes' merges: Neo4j-only's
        assert phase.cpu is not None and phase.cpu.server_after_seconds is not None
        assert phase.cpu.server_after_seconds >= 0
    assert size.embedding_ceiling.cpu is not None and size.embedding_ceiling.cpu.client_seconds > 0
    _assert_server_gone(lines)


def test_the_peer_bench_waits_for_its_server_then_deletes_it(
    test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    lines: list[str] = []
    options = PeerOptions(
        sizes=(60,),
        queries=3,
        warmup=1,
        warmup_facts=20,
        batch_size=30,
        heap="512m",
        pagecache="64m",
    )
    report: PeerReport = run_peer_bench(
        options, settings=test_settings, embedder=embedder, progress=lines.append
    )
    assert _waits(lines) == [
        "timing graphmem's writes",
        "timing graphiti-core's writes",
        "timing the searches",
    ], lines
    assert report.server.mode == "scratch" and not report.server.kept
    (size,) = report.sizes
    assert size.size == 60
    _assert_server_gone(lines)


def test_the_tenants_bench_waits_for_its_server_then_deletes_it(
    test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    lines: list[str] = []
    options = TenantsOptions(
        namespaces=2,
        facts=10,
        large=30,
        small=10,
        pool=40,
        queries=2,
        warmup=0,
        heap="512m",
        pagecache="64m",
    )
    report = run_tenants_bench(
        options, settings=test_settings, embedder=embedder, progress=lines.append
    )
    assert _waits(lines) == ["loading", "timing recall"], lines
    assert report.server.mode == "scratch" and not report.server.kept
    assert report.load.items == 60 and report.load.cpu is not None
    assert report.load.cpu.server_seconds is not None and report.load.cpu.server_seconds > 0
    assert [n.facts for n in report.namespaces] == [10, 30, 10]  # small, large, a tenant
    _assert_server_gone(lines)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_terminated_run_still_stops_and_deletes_its_server(signum: signal.Signals) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert child.stdout is not None
    lines: list[str] = []
    try:
        for line in child.stdout:
            lines.append(line.rstrip("\n"))
            if lines[-1] == "holding":
                break
        assert lines[-1:] == ["holding"], lines
        child.send_signal(signum)
        rest, _ = child.communicate(timeout=180)
        lines += rest.splitlines()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if started := [line for line in lines if line.startswith("starting a throwaway")]:
            home = started[0].split(" in ", 1)[1].split(" (", 1)[0]
            if Path(home).exists():  # the run failed to clean up: do it for the next tests
                LocalNeo4jServer(load_settings(neo4j_uri="local", local_neo4j_home=home)).stop()
                shutil.rmtree(home, ignore_errors=True)
    assert child.returncode == 128 + signum, lines
    _assert_server_gone(lines)
