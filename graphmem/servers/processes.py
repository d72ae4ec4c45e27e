"""Processes and ports of the local Neo4j server, from the operating system (``/proc`` where
there is one)."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from graphmem.errors import Neo4jServerError

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (zombies count as dead and are reaped)."""
    if pid <= 0:
        return False
    with contextlib.suppress(ChildProcessError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _proc_stat(pid)  # None or empty: the platform does not tell, so alive
    return not fields or fields[0] not in ("Z", "X")


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first), or None where
    the platform or the process does not tell."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None


def process_started(pid: int) -> str:
    """When process ``pid`` started (ISO 8601, UTC), from ``/proc``; now where unknown."""
    with contextlib.suppress(OSError, ValueError, IndexError, StopIteration, TypeError):
        ticks = int((_proc_stat(pid) or [])[19])
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return datetime.fromtimestamp(boot + ticks / os.sysconf("SC_CLK_TCK"), UTC).isoformat()
    return datetime.now(UTC).isoformat()


def process_cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of process ``pid`` so far (Linux ``/proc``); None if unknown."""
    fields = _proc_stat(pid)
    try:
        return None if fields is None else (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (IndexError, ValueError):
        return None


def process_cmdline(pid: int) -> str | None:
    """The command line of ``pid``, or None where the platform does not tell."""
    proc = Path(f"/proc/{pid}/cmdline")
    if proc.exists():
        with contextlib.suppress(OSError):
            return proc.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        return None
    try:
        out = subprocess.run(
            ["ps", "-p", str(pid), "-o", "command="],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout or None


def terminate_process(pid: int, *, timeout: float) -> bool:
    """SIGTERM ``pid`` and wait; SIGKILL it after ``timeout``. True if it stopped cleanly."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    while pid_alive(pid):
        time.sleep(0.05)
    return False


def check_port_free(port: int, *, wait: float) -> None:
    """Return once ``port`` on 127.0.0.1 is free, waiting up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
                return
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                if time.monotonic() >= deadline:
                    raise Neo4jServerError(
                        f"port {port} on 127.0.0.1 is already in use by another "
                        "process; stop it or choose another port with "
                        "GRAPHMEM_LOCAL_NEO4J_PORT"
                    ) from exc
        time.sleep(0.2)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
