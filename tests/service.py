"""A real ``graphmem serve`` process for the service tests: started on a free port against
the test graph, waited for until ``/ready`` answers, stopped (SIGTERM) at the end."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.models.keys import NewKey
from tests.helpers import cli_env, free_port


@dataclass
class Served:
    """A running server: its base URL, process and log (its stderr, in a file so that a
    chatty server never blocks on a full pipe)."""

    url: str
    port: int
    process: subprocess.Popen[str]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@contextmanager
def serve_process(graph: Graph, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``graphmem serve`` on a free port (keys checked on every request unless ``args`` say
    otherwise), ready when yielded."""
    port = free_port()
    command = [sys.executable, "-m", "graphmem", "serve", "--port", str(port)]
    if not any(a.startswith("--key-cache") for a in args):
        command += ["--key-cache", "0"]
    log_path = Path(tempfile.mkdtemp(prefix="graphmem-serve-")) / "stderr.log"
    log = log_path.open("w", encoding="utf-8")
    child = subprocess.Popen(
        [*command, *args],
        env={**os.environ, **cli_env(graph), **(env or {})},
        stderr=log,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if child.poll() is not None:
                raise AssertionError(f"graphmem serve stopped: {log_path.read_text()}")
            try:
                if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("graphmem serve was not ready in 120 s")
            time.sleep(0.2)
        yield Served(url, port, child, log_path)
    finally:
        child.terminate()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        log.close()


def new_key(memory: Memory, role: str = "write", **scope: object) -> NewKey:
    """A fresh key with a unique name (``role``, and ``namespaces=`` / ``prefix=``)."""
    name = f"agent-{uuid.uuid4().hex[:8]}"
    return memory.keys.create(name, role=role, **scope)  # type: ignore[arg-type]


def bearer(key: NewKey | str) -> dict[str, str]:
    """The Authorization header for a key."""
    secret = key if isinstance(key, str) else key.key
    return {"Authorization": f"Bearer {secret}"}
