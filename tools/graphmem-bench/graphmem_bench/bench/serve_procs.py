"""The ``graphmem serve`` processes of the service benchmark: started as an operator starts
them, each on a free port of 127.0.0.1, waited for until ``/ready`` answers, and stopped with
SIGTERM (a graceful stop: the requests in flight finish, then the process exits)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx
from pydantic import BaseModel

from graphmem import GraphmemError
from graphmem.testing import Progress

#: The only address the benchmark's servers listen on.
LOOPBACK = "127.0.0.1"
#: Seconds a server may take to answer ``/ready`` (it loads the embedding model first).
READY_TIMEOUT_S = 180.0
#: Seconds the requests in flight get after SIGTERM (``graphmem serve --graceful``) ...
GRACEFUL_S = 30
#: ... and how much longer the benchmark waits for the process to exit before killing it.
EXIT_GRACE_S = 15.0


class ServeBenchError(GraphmemError):
    """A ``graphmem serve`` process of the benchmark did not start."""


class ServerProcess(BaseModel):
    """One ``graphmem serve`` process of a run, as it started and stopped."""

    url: str
    pid: int
    #: Seconds from its start until ``/ready`` answered 200.
    ready_seconds: float
    #: Its exit status after SIGTERM (None: it had to be killed).
    exit_code: int | None = None
    #: Seconds from SIGTERM until it exited.
    stop_seconds: float | None = None
    #: Whether its output (stdout and stderr) held a traceback.
    traceback: bool = False

    @property
    def graceful(self) -> bool:
        """It stopped by itself after SIGTERM, without a traceback: uvicorn finishes the
        requests in flight and the shutdown, then exits 0 or ends by the signal it caught
        (-15), as a process stopped by SIGTERM does."""
        return self.exit_code in (0, -signal.SIGTERM) and not self.traceback


@dataclass
class _Running:
    port: int
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    started: float
    ready: float | None = None
    record: ServerProcess | None = field(default=None)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def log_tail(self, chars: int = 2_000) -> str:
        self.log.flush()
        text = Path(self.log.name).read_text(encoding="utf-8", errors="replace")
        return text[-chars:].strip()


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports of 127.0.0.1 (held together while chosen)."""
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((LOOPBACK, 0))
            ports.append(int(sock.getsockname()[1]))
    return ports


def serve_command(port: int, key_cache: float, extra: Sequence[str] = ()) -> list[str]:
    """The command line of one server: this Python's ``graphmem serve`` on ``port`` of
    127.0.0.1, with ``extra`` options."""
    return [
        sys.executable,
        "-m",
        "graphmem",
        "serve",
        "--host",
        LOOPBACK,
        "--port",
        str(port),
        "--key-cache",
        f"{key_cache:g}",
        "--graceful",
        str(GRACEFUL_S),
        *extra,
    ]


@contextmanager
def serve_processes(
    count: int,
    env: Mapping[str, str],
    say: Progress,
    *,
    key_cache: float = 5.0,
    args: Sequence[Sequence[str]] | None = None,
) -> Iterator[list[ServerProcess]]:
    """``count`` ``graphmem serve`` processes with this environment (server ``n`` with the
    options ``args[n]`` added), ready when yielded; on exit each gets SIGTERM and its record
    (yielded, filled in then) its exit status. A server that exits or is not ready in time
    raises ServeBenchError with the end of its log."""
    with tempfile.TemporaryDirectory(prefix="graphmem-bench-serve-") as logs:
        running: list[_Running] = []
        try:
            for n, port in enumerate(free_ports(count)):
                log = open(Path(logs) / f"serve-{n}.log", "w+b")  # noqa: SIM115 (closed below)
                process = subprocess.Popen(
                    serve_command(port, key_cache, args[n] if args else ()),
                    env=dict(env),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
                running.append(_Running(port, process, log, time.monotonic()))
            say(f"starting {count} graphmem serve processes on {LOOPBACK}")
            records = _wait_ready(running)
            for record in records:
                say(f"  {record.url} (pid {record.pid}) ready after {record.ready_seconds:.1f} s")
            yield records
        finally:
            _stop(running, say)
            for server in running:
                server.log.close()


def _wait_ready(running: Sequence[_Running]) -> list[ServerProcess]:
    deadline = time.monotonic() + READY_TIMEOUT_S
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        while True:
            for server in running:
                if server.ready is not None:
                    continue
                if server.process.poll() is not None:
                    raise ServeBenchError(
                        f"graphmem serve on port {server.port} exited with status "
                        f"{server.process.returncode}: {server.log_tail()}"
                    )
                try:
                    if http.get(f"{server.url}/ready").status_code == 200:
                        server.ready = time.monotonic()
                except httpx.HTTPError:
                    pass
            if all(server.ready is not None for server in running):
                break
            if time.monotonic() > deadline:
                late = [s.url for s in running if s.ready is None]
                raise ServeBenchError(
                    f"graphmem serve was not ready after {READY_TIMEOUT_S:.0f} s: "
                    f"{', '.join(late)}: {running[0].log_tail()}"
                )
            time.sleep(0.2)
    for server in running:
        assert server.ready is not None
        server.record = ServerProcess(
            url=server.url, pid=server.process.pid, ready_seconds=server.ready - server.started
        )
    return [server.record for server in running if server.record is not None]


def _stop(running: Sequence[_Running], say: Progress) -> None:
    """SIGTERM to every server at once, then each waited for (killed when it takes too
    long); the exit status and time go into its record."""
    began = time.monotonic()
    for server in running:
        if server.process.poll() is None:
            server.process.send_signal(signal.SIGTERM)
    for server in running:
        left = GRACEFUL_S + EXIT_GRACE_S - (time.monotonic() - began)
        try:
            code: int | None = server.process.wait(timeout=max(left, 0.1))
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
            code = None
        record = server.record
        if record is None:
            continue
        record.exit_code = code
        record.stop_seconds = time.monotonic() - began
        record.traceback = "Traceback" in server.log_tail(1_000_000)
        if not record.graceful:
            say(f"  {server.url} ended with status {code}: {server.log_tail(1_000)}")


__all__ = [
    "GRACEFUL_S",
    "LOOPBACK",
    "ServeBenchError",
    "ServerProcess",
    "free_ports",
    "serve_command",
    "serve_processes",
]
