"""``graphmem bench startup``: what each entry point costs to start, as a user runs it.

Every command runs as its own process, as from a shell: ``graphmem --help``, ``graphmem
stats``, a one-shot ``graphmem recall``, ``graphmem remember``, and ``graphmem mcp`` over
stdio until its ``tools/list`` is answered (and, separately, until its first search is
answered, which needs the embedding model). For each, after one untimed run, the median over
``runs`` runs of the process's CPU seconds (user + system), its wall-clock seconds and its
peak resident memory. Commands that embed run once per backend: ONNX (the default) and, when
sentence-transformers is installed, torch, on the same Neo4j (the graph is moved between the
backends' models with ``graphmem reembed`` before their runs). An untimed first call builds
the ONNX graph into the cache, as a first use does; that build time is reported apart.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal, Unpack

from pydantic import BaseModel, ConfigDict, Field

from graphmem import DatabaseError, GraphmemSettings, __version__
from graphmem.testing import Neo4jTarget, Progress, ServerOptions
from graphmem_bench.bench.report import MachineInfo, TargetResult
from graphmem_bench.bench.runner import machine_info
from graphmem_bench.run import Run, RunOn, measuring_run

#: One-shot recall: CPU seconds and peak resident megabytes a process may use.
RECALL_CPU_TARGET = 2.0
RECALL_RSS_TARGET_MB = 400.0
#: Seconds from starting ``graphmem mcp`` to its answered ``tools/list``.
MCP_LIST_TARGET = 1.5

Backend = Literal["onnx", "torch"]


class StartupOptions(ServerOptions):
    """How many runs of each command, on which Neo4j."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    runs: int = Field(default=3, ge=1, le=50)
    #: Also measure the torch backend (when sentence-transformers is installed).
    torch: bool = True


class CommandCost(BaseModel):
    """The medians over ``runs`` runs of one command."""

    command: str
    backend: Backend | None = None
    runs: int
    cpu_seconds: float
    wall_seconds: float
    peak_rss_mb: float


class StartupReport(BaseModel):
    graphmem_version: str
    started_at: datetime
    finished_at: datetime
    options: StartupOptions
    machine: MachineInfo
    #: Seconds the untimed first call spent building the ONNX graph (0: it was cached).
    onnx_build_seconds: float | None
    #: Why the torch backend was not measured, if it was not.
    torch_skipped: str | None = None
    results: list[CommandCost]
    targets: list[TargetResult]

    @property
    def passed(self) -> bool:
        return all(t.status != "fail" for t in self.targets)


def run_startup_bench(options: StartupOptions | None = None, **on: Unpack[RunOn]) -> StartupReport:
    """Measure every entry point's start (on a throwaway Neo4j unless ``options.server`` is
    ``configured``) and return the report."""
    options = options or StartupOptions()
    with measuring_run(options, **on) as run:
        return _run(options, run)


def child_env(settings: GraphmemSettings, target: Neo4jTarget) -> dict[str, str]:
    """The environment of a graphmem child process: this one's, pointed at ``target`` with the
    same embedder settings."""
    env = dict(os.environ)
    env.update(
        {
            "GRAPHMEM_NEO4J_URI": target.uri,
            "GRAPHMEM_NEO4J_USER": target.user,
            "GRAPHMEM_NEO4J_PASSWORD": target.password.get_secret_value(),
            "GRAPHMEM_NEO4J_DATABASE": target.database,
            "GRAPHMEM_CACHE_DIR": str(settings.cache_dir),
            "GRAPHMEM_EMBEDDING_BACKEND": settings.embedding_backend,
        }
    )
    for name, value in (
        ("GRAPHMEM_EMBEDDING_MODEL", settings.embedding_model),
        ("GRAPHMEM_EMBEDDING_MODEL_ID", settings.embedding_model_id),
        ("GRAPHMEM_EMBEDDING_PRECISION", settings.embedding_precision),
    ):
        if value:
            env[name] = value
        else:
            env.pop(name, None)
    return env


def _run(options: StartupOptions, run: Run) -> StartupReport:
    settings, target, say, started = run.settings, run.target, run.say, run.started
    ns = f"bench-startup-{started:%Y%m%dT%H%M%SZ}"
    env = child_env(settings, target)
    graphmem = [sys.executable, "-m", "graphmem"]
    say("first use: the ONNX graph is read from the cache or built")
    began = time.perf_counter()
    _check(_measure([*graphmem, "remember", "The user likes green tea.", "--ns", ns], env))
    first_call = time.perf_counter() - began
    build = _onnx_build_seconds(settings)
    results = [
        _median("graphmem --help", None, options.runs, [*graphmem, "--help"], env, say),
        _median("graphmem stats", None, options.runs, [*graphmem, "stats", "--ns", ns], env, say),
    ]
    backends: list[Backend] = ["onnx"]
    skipped = None
    if not options.torch:
        skipped = "not asked for"
    elif importlib.util.find_spec("sentence_transformers") is None:
        skipped = "sentence-transformers is not installed"
    else:
        backends.append("torch")
    for backend in backends:
        backend_env = {**env, "GRAPHMEM_EMBEDDING_BACKEND": backend}
        if backend == "torch":
            say("moving the graph to the torch backend's model (graphmem reembed)")
            backend_env.pop("GRAPHMEM_EMBEDDING_PRECISION", None)
            _check(_measure([*graphmem, "reembed", "--yes"], backend_env))
        recall = [*graphmem, "recall", "what does the user drink", "--ns", ns]
        remember = [*graphmem, "remember", "The user likes coffee.", "--ns", ns]
        mcp = [*graphmem, "mcp", "--namespace", ns]
        results += [
            _median("graphmem recall", backend, options.runs, recall, backend_env, say),
            _median("graphmem remember", backend, options.runs, remember, backend_env, say),
            _mcp_median("graphmem mcp: tools/list", backend, options, mcp, backend_env, say),
            _mcp_median(
                "graphmem mcp: first search", backend, options, mcp, backend_env, say, search=True
            ),
        ]
    return StartupReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        options=options,
        machine=machine_info(),
        onnx_build_seconds=build if build is not None else round(first_call, 3),
        torch_skipped=skipped,
        results=results,
        targets=startup_targets(results),
    )


def startup_targets(results: list[CommandCost]) -> list[TargetResult]:
    """One-shot recall within 2 CPU seconds and 400 MB, ``tools/list`` within 1.5 s (ONNX)."""
    by_name = {(r.command, r.backend): r for r in results}
    targets = []
    recall = by_name.get(("graphmem recall", "onnx"))
    if recall is not None:
        targets += [
            TargetResult.check(
                "one-shot recall CPU", 0, recall.cpu_seconds, RECALL_CPU_TARGET, "<=", "s"
            ),
            TargetResult.check(
                "one-shot recall peak RSS", 0, recall.peak_rss_mb, RECALL_RSS_TARGET_MB, "<=", "MB"
            ),
        ]
    listed = by_name.get(("graphmem mcp: tools/list", "onnx"))
    if listed is not None:
        targets.append(
            TargetResult.check(
                "mcp tools/list answered", 0, listed.wall_seconds, MCP_LIST_TARGET, "<=", "s"
            )
        )
    return targets


# --- measuring ------------------------------------------------------------------------------
class _Run(BaseModel):
    cpu: float
    wall: float
    rss_mb: float
    status: int
    stderr: str = ""


def _measure(command: list[str], env: dict[str, str]) -> _Run:
    """Run ``command`` to its end: its CPU, wall time and peak RSS from ``wait4``."""
    began = time.perf_counter()
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert process.stderr is not None
    stderr = process.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - began
    return _Run(
        cpu=usage.ru_utime + usage.ru_stime,
        wall=wall,
        rss_mb=usage.ru_maxrss / 1024,
        status=process.returncode,
        stderr=stderr[-2000:],
    )


def _check(run: _Run) -> _Run:
    if run.status != 0:
        raise DatabaseError(f"a startup command failed (status {run.status}): {run.stderr}")
    return run


def _median(
    label: str,
    backend: Backend | None,
    runs: int,
    command: list[str],
    env: dict[str, str],
    say: Progress,
) -> CommandCost:
    say(f"{label}" + (f" ({backend})" if backend else "") + f": {runs} runs after one untimed")
    _check(_measure(command, env))  # the server's query plans and the OS's file cache warm
    measured = [_check(_measure(command, env)) for _ in range(runs)]
    return _cost(label, backend, measured)


def _cost(label: str, backend: Backend | None, measured: list[_Run]) -> CommandCost:
    return CommandCost(
        command=label,
        backend=backend,
        runs=len(measured),
        cpu_seconds=round(statistics.median(r.cpu for r in measured), 3),
        wall_seconds=round(statistics.median(r.wall for r in measured), 3),
        peak_rss_mb=round(statistics.median(r.rss_mb for r in measured), 1),
    )


def _mcp_median(
    label: str,
    backend: Backend,
    options: StartupOptions,
    command: list[str],
    env: dict[str, str],
    say: Progress,
    *,
    search: bool = False,
) -> CommandCost:
    say(f"{label} ({backend}): {options.runs} runs after one untimed")
    _mcp_run(command, env, search)
    return _cost(label, backend, [_mcp_run(command, env, search) for _ in range(options.runs)])


def _mcp_run(command: list[str], env: dict[str, str], search: bool) -> _Run:
    """Start the server over stdio, as a host does: initialize, initialized, tools/list (and
    with ``search`` one search_memories call); measured when the last answer arrives."""
    began = time.perf_counter()
    process = subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        _rpc(process.stdin, process.stdout, 1, "initialize", _INITIALIZE)
        _send(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = _rpc(process.stdin, process.stdout, 2, "tools/list", {})
        if not answer.get("result", {}).get("tools"):
            raise DatabaseError(f"graphmem mcp listed no tools: {answer}")
        if search:
            call = {"name": "search_memories", "arguments": {"query": "what does the user drink"}}
            answer = _rpc(process.stdin, process.stdout, 3, "tools/call", call)
            if answer.get("result", {}).get("isError", True):
                raise DatabaseError(f"search_memories failed: {answer}")
        wall = time.perf_counter() - began
        cpu, rss = _proc_usage(process.pid)
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return _Run(cpu=cpu, wall=wall, rss_mb=rss, status=0)


_INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "graphmem-bench-startup", "version": __version__},
}


def _send(stream: IO[bytes], message: dict[str, Any]) -> None:
    stream.write(json.dumps(message).encode() + b"\n")
    stream.flush()


def _rpc(
    stdin: IO[bytes], stdout: IO[bytes], number: int, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    _send(stdin, {"jsonrpc": "2.0", "id": number, "method": method, "params": params})
    while True:
        line = stdout.readline()
        if not line:
            raise DatabaseError(f"graphmem mcp ended before answering {method}")
        message = json.loads(line)
        if message.get("id") == number:
            if "error" in message:
                raise DatabaseError(f"graphmem mcp refused {method}: {message['error']}")
            return message  # type: ignore[no-any-return]


def _proc_usage(pid: int) -> tuple[float, float]:
    """CPU seconds and peak RSS (MB) of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    peak = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    return cpu, peak


def _onnx_build_seconds(settings: GraphmemSettings) -> float | None:
    """How long the newest cached ONNX graph took to build, if its manifest says."""
    folder = settings.cache_dir.expanduser() / "onnx"
    manifests = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for manifest in reversed(manifests):
        try:
            record = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        seconds = record.get("build_seconds") if isinstance(record, dict) else None
        if isinstance(seconds, int | float):
            return float(seconds)
    return None


def render_startup_markdown(report: StartupReport) -> str:
    """The report as a short Markdown page."""
    build = report.onnx_build_seconds
    lines = [
        f"# graphmem start-up ({report.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"Medians over {report.options.runs} runs of each command as its own process; "
        f"{report.machine.cpus} CPUs. CPU is user + system seconds of the process; RSS its "
        "peak resident memory. The MCP rows stop the clock when the answer arrives.",
        "",
        "| command | backend | CPU s | wall s | peak RSS MB |",
        "|---|---|---:|---:|---:|",
    ]
    for r in report.results:
        lines.append(
            f"| {r.command} | {r.backend or '-'} | {r.cpu_seconds:.2f} | {r.wall_seconds:.2f} "
            f"| {r.peak_rss_mb:.0f} |"
        )
    lines.append("")
    if build is not None:
        lines.append(f"First use built the ONNX graph in {build:.1f} s (cached afterwards).")
    if report.torch_skipped:
        lines.append(f"The torch backend was not measured: {report.torch_skipped}.")
    lines += ["", "| target | measured | threshold | status |", "|---|---:|---:|---|"]
    for t in report.targets:
        lines.append(
            f"| {t.name} | {t.measured:.2f} {t.unit} | {t.comparison} {t.threshold:g} {t.unit} "
            f"| {t.status} |"
        )
    return "\n".join(lines) + "\n"


__all__ = [
    "CommandCost",
    "StartupOptions",
    "StartupReport",
    "child_env",
    "render_startup_markdown",
    "run_startup_bench",
    "startup_targets",
]
