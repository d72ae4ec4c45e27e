"""Neo4j 2026.09 Community in Docker, through ``docker/compose.yaml`` (GRAPHMEM_NEO4J_URI=docker).

The compose file publishes Bolt on 127.0.0.1 only. The ``neo4j`` user's password is generated
once into a 0600 file under graphmem's data directory and handed to ``docker compose`` in the
environment, never on a command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from pydantic import SecretStr

from graphmem._files import bundled_resource, ensure_secret_file
from graphmem.errors import Neo4jServerError, Neo4jUnavailableError
from graphmem.servers.connection import Neo4jTarget, wait_for_bolt
from graphmem.servers.state import ServerStatus, StartResult
from graphmem.settings import GraphmemSettings

IMAGE_VERSION = "2026.09.0-community"
_SERVICE = "neo4j"


def docker_engine_available(timeout: float = 5.0) -> bool:
    """Whether a Docker engine answers (the ``docker`` client alone is not enough)."""
    docker = shutil.which("docker")
    if docker is None:
        return False
    try:
        result = subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0 and bool(result.stdout.strip())


class DockerNeo4j:
    """Starts, stops and inspects the compose service ``neo4j`` of project ``graphmem``."""

    mode = "docker"

    def __init__(self, settings: GraphmemSettings) -> None:
        self.settings = settings
        self.port = settings.docker_port

    @property
    def compose_file(self) -> Path:
        if self.settings.docker_compose_file is not None:
            return self.settings.docker_compose_file.expanduser().resolve()
        return bundled_resource("docker/compose.yaml", "_docker/compose.yaml")

    @property
    def password_file(self) -> Path:
        return self.settings.data_dir.expanduser().resolve() / "docker-neo4j-password"

    def target(self) -> Neo4jTarget:
        return Neo4jTarget(
            uri=f"bolt://127.0.0.1:{self.port}",
            user="neo4j",
            password=SecretStr(ensure_secret_file(self.password_file)),
            database=self.settings.neo4j_database,
            mode="docker",
        )

    def status(self) -> ServerStatus:
        result = self._compose("ps", "--all", "--format", "json", _SERVICE, check=False)
        running = False
        note = "not running"
        for line in result.stdout.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                entries = json.loads(line)
            except ValueError:
                continue
            for entry in entries if isinstance(entries, list) else [entries]:
                state = str(entry.get("State", ""))
                health = str(entry.get("Health", ""))
                running = state == "running"
                note = f"container {entry.get('Name', _SERVICE)}: {state} {health}".strip()
        return ServerStatus(
            running=running,
            uri=self.target().uri,
            home=self.compose_file.parent,
            version=IMAGE_VERSION,
            note=note,
        )

    def start(self) -> StartResult:
        began = time.monotonic()
        already = self.status().running
        self._compose("up", "--detach", "--wait", _SERVICE)
        try:
            wait_for_bolt(self.target(), timeout=self.settings.local_neo4j_start_timeout)
        except Neo4jUnavailableError as exc:
            logs = self._compose("logs", "--tail", "40", _SERVICE, check=False).stdout
            raise Neo4jServerError(str(exc), log_tail=logs) from exc
        return StartResult(self.status(), already, time.monotonic() - began)

    def stop(self, *, timeout: float = 90.0) -> bool:
        was_running = self.status().running
        self._compose("stop", "--timeout", str(int(timeout)), _SERVICE)
        return was_running

    def _compose(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        docker = shutil.which("docker")
        if docker is None:
            raise Neo4jServerError("GRAPHMEM_NEO4J_URI=docker needs the `docker` command")
        env = dict(os.environ)
        env["GRAPHMEM_NEO4J_PASSWORD"] = ensure_secret_file(self.password_file)
        env["GRAPHMEM_DOCKER_BOLT_PORT"] = str(self.port)
        command = [
            docker,
            "compose",
            "-f",
            str(self.compose_file),
            "-p",
            self.settings.docker_project,
            *args,
        ]
        try:
            result = subprocess.run(
                command,
                capture_output=True,
                text=True,
                env=env,
                check=False,
                timeout=self.settings.local_neo4j_start_timeout,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise Neo4jServerError(f"`docker compose {' '.join(args)}` failed: {exc}") from exc
        if check and result.returncode != 0:
            raise Neo4jServerError(
                f"`docker compose {' '.join(args)}` failed (exit {result.returncode}); "
                "is a Docker engine running?",
                log_tail=(result.stderr or result.stdout)[-4000:],
            )
        return result
