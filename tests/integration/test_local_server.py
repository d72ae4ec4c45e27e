"""The local server's life cycle, through `graphmem neo4j start|status|stop`."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from graphmem.errors import Neo4jServerError
from graphmem.servers.connection import open_driver
from graphmem.servers.local import LocalNeo4jServer
from graphmem.servers.processes import pid_alive
from graphmem.settings import load_settings
from tests.helpers import free_port, listening_addresses


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    values = {
        "GRAPHMEM_NEO4J_URI": "local",
        "GRAPHMEM_LOCAL_NEO4J_HOME": str(tmp_path / "home"),
        "GRAPHMEM_LOCAL_NEO4J_PORT": str(free_port()),
    }
    yield values
    # never leave a server behind, whatever the test did
    server = LocalNeo4jServer(
        load_settings(
            neo4j_uri="local",
            local_neo4j_home=values["GRAPHMEM_LOCAL_NEO4J_HOME"],
            local_neo4j_port=int(values["GRAPHMEM_LOCAL_NEO4J_PORT"]),
        )
    )
    server.stop(timeout=30)


def _cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    from graphmem.cli import main

    result = CliRunner().invoke(main, ["neo4j", *args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output[result.output.index("{") :]))


def _server(env: dict[str, str]) -> LocalNeo4jServer:
    return LocalNeo4jServer(
        load_settings(
            neo4j_uri="local",
            local_neo4j_home=env["GRAPHMEM_LOCAL_NEO4J_HOME"],
            local_neo4j_port=int(env["GRAPHMEM_LOCAL_NEO4J_PORT"]),
        )
    )


@pytest.mark.both_versions
def test_start_twice_kill_9_and_restart_keeps_the_data(env: dict[str, str]) -> None:
    port = int(env["GRAPHMEM_LOCAL_NEO4J_PORT"])
    assert _cli(env, "status")["running"] is False

    first = _cli(env, "start")
    assert first["running"] is True and first["already_running"] is False
    assert first["uri"] == f"bolt://127.0.0.1:{port}"
    home = Path(env["GRAPHMEM_LOCAL_NEO4J_HOME"])
    assert stat.S_IMODE((home / "password").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert listening_addresses(port) <= {"127.0.0.1", "::ffff:127.0.0.1"}
    assert listening_addresses(port)
    assert "dbms.usage_report.enabled=false" in (home / "conf" / "neo4j.conf").read_text()
    assert (home / "neo4j-version").read_text().strip() == first["version"]

    second = _cli(env, "start")
    assert second["already_running"] is True
    assert second["pid"] == first["pid"]

    server = _server(env)
    with open_driver(server.target()) as driver:
        driver.execute_query("CREATE (:LifecycleProbe {value: 42})")
        records, _, _ = driver.execute_query(
            "CALL dbms.components() YIELD versions RETURN versions[0] AS version"
        )
        # The first vector computation makes Lucene choose (and log) its implementation.
        driver.execute_query("RETURN vector.similarity.cosine([1.0, 2.0], [2.0, 1.0]) AS s")
    assert records[0]["version"] == first["version"] == server.version
    # Lucene's SIMD vector distances: on where its version and the JDK allow them.
    simd = {"5.26.30": range(20, 23), "2026.09.0": range(21, 26)}[server.version]
    log = (home / "logs" / "server.log").read_text()
    assert ("Java vector incubator API enabled" in log) == (server.java.feature in simd)

    os.kill(first["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 30
    while pid_alive(first["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    status = _cli(env, "status")
    assert status["running"] is False and "stale" in status["note"]

    third = _cli(env, "start")
    assert third["running"] is True and third["already_running"] is False
    assert third["pid"] != first["pid"]
    with open_driver(server.target()) as driver:
        records, _, _ = driver.execute_query("MATCH (p:LifecycleProbe) RETURN p.value AS v")
    assert [r["v"] for r in records] == [42]

    stopped = _cli(env, "stop")
    assert stopped["stopped"] is True
    assert not pid_alive(third["pid"])
    assert _cli(env, "stop")["stopped"] is False
    assert _cli(env, "status")["running"] is False


def test_a_failed_start_says_why_with_the_log_tail(env: dict[str, str]) -> None:
    server = LocalNeo4jServer(
        load_settings(
            neo4j_uri="local",
            local_neo4j_home=env["GRAPHMEM_LOCAL_NEO4J_HOME"],
            local_neo4j_port=int(env["GRAPHMEM_LOCAL_NEO4J_PORT"]),
            local_neo4j_heap="1k",
        )
    )
    with pytest.raises(Neo4jServerError, match="exited during start-up") as info:
        server.start()
    assert info.value.log_tail and "heap" in info.value.log_tail.lower()
    assert not server.status().running


def test_a_busy_port_is_reported(env: dict[str, str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", int(env["GRAPHMEM_LOCAL_NEO4J_PORT"])))
        busy.listen()
        with pytest.raises(Neo4jServerError, match="already in use"):
            _server(env).start()


def test_start_finds_a_running_server_ready_whatever_became_of_its_log(
    env: dict[str, str],
) -> None:
    # `start` of a running server waited for the ready line of logs/server.log: with the log
    # deleted (a clean-up) it crashed with FileNotFoundError, and with the log truncated (a
    # rotation) it waited the whole start timeout, then said the server did not become ready.
    first = _cli(env, "start")
    log = Path(env["GRAPHMEM_LOCAL_NEO4J_HOME"]) / "logs" / "server.log"
    log.unlink()
    began = time.monotonic()
    again = _cli(env, "start")
    assert again["already_running"] is True and again["pid"] == first["pid"]
    log.write_text("rotated\n")
    assert _cli(env, "start")["already_running"] is True
    assert time.monotonic() - began < 60
    # And with its password file edited as well, start says so, without waiting it out.
    from graphmem.cli import main

    password = Path(env["GRAPHMEM_LOCAL_NEO4J_HOME"]) / "password"
    kept = password.read_text()
    password.write_text("not-the-password-it-has\n")
    began = time.monotonic()
    refused = CliRunner().invoke(main, ["neo4j", "start"], env=env)
    assert refused.exit_code == 1 and "refused the credentials" in refused.output
    assert time.monotonic() - began < 60
    password.write_text(kept)
    # server.json deleted too: the server is still found, by its command line, and stopped.
    (Path(env["GRAPHMEM_LOCAL_NEO4J_HOME"]) / "server.json").unlink()
    assert _cli(env, "status")["pid"] == first["pid"]
    assert _cli(env, "stop")["stopped"] is True
    assert not pid_alive(first["pid"])
