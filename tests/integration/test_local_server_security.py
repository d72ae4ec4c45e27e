"""The local server as a hostile local user meets it: no login before the password is set, no
user graphmem did not create, no file or network access through ``LOAD CSV``."""

from __future__ import annotations

import collections
import contextlib
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest
from click.testing import CliRunner

from graphmem.errors import Neo4jServerError
from graphmem.servers.connection import open_driver
from graphmem.servers.local import LocalNeo4jServer
from graphmem.settings import load_settings
from tests.helpers import RecordingHTTPHandler, free_port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalNeo4jServer]:
    local = LocalNeo4jServer(
        load_settings(
            neo4j_uri="local", local_neo4j_home=tmp_path / "home", local_neo4j_port=free_port()
        )
    )
    yield local
    local.stop(timeout=30)


def _users(server: LocalNeo4jServer) -> list[str]:
    with open_driver(server.target()) as driver:
        records, _, _ = driver.execute_query(
            "SHOW USERS YIELD user RETURN user ORDER BY user", database_="system"
        )
    return [record["user"] for record in records]


def test_no_login_with_the_default_or_an_empty_password_races_a_first_start(
    server: LocalNeo4jServer,
) -> None:
    """Pollers try neo4j/neo4j and neo4j/'' from before the process starts until Bolt has
    answered them for a while; none gets in, and no user is added."""
    outcomes: collections.Counter[str] = collections.Counter()
    admitted: list[str] = []
    answered = threading.Event()
    stop = threading.Event()

    def poll(password: str) -> None:
        refusals = 0
        while not stop.is_set() and refusals < 4:
            driver = neo4j.GraphDatabase.driver(
                f"bolt://127.0.0.1:{server.port}",
                auth=("neo4j", password),
                connection_timeout=1.0,
            )
            try:
                driver.verify_connectivity()
                admitted.append(password)
                # What the earlier takeover did once in: a second admin of its own.
                driver.execute_query(
                    "CREATE USER intruder IF NOT EXISTS SET PASSWORD 'intruder-password' "
                    "CHANGE NOT REQUIRED",
                    database_="system",
                )
            except neo4j.exceptions.ServiceUnavailable:
                outcomes["no server yet"] += 1
            except neo4j.exceptions.Neo4jError as exc:
                outcomes[exc.code or type(exc).__name__] += 1
                refusals += 1
                answered.set()
            finally:
                driver.close()
            time.sleep(0.02)

    pollers = [threading.Thread(target=poll, args=(pw,)) for pw in ("neo4j", "")]
    for thread in pollers:
        thread.start()
    try:
        server.start()
    finally:
        stop.set()
        for thread in pollers:
            thread.join(timeout=30)

    assert admitted == []
    assert outcomes["no server yet"] > 0, outcomes  # the pollers were there before Bolt opened
    assert answered.is_set(), outcomes  # and Bolt answered them, with a refusal
    assert _users(server) == ["neo4j"]


def test_a_store_with_a_user_graphmem_did_not_create_refuses_to_start(
    server: LocalNeo4jServer,
) -> None:
    server.start()
    with open_driver(server.target()) as driver:
        driver.execute_query(
            "CREATE USER intruder SET PASSWORD 'intruder-password' CHANGE NOT REQUIRED",
            database_="system",
        )
    server.stop()

    with pytest.raises(Neo4jServerError, match=r"refused to start.*intruder") as refused:
        server.start()
    assert "--remove-unknown-users" in str(refused.value)
    assert not server.status().running

    from graphmem.cli import main

    env = {
        "GRAPHMEM_NEO4J_URI": "local",
        "GRAPHMEM_LOCAL_NEO4J_HOME": str(server.home),
        "GRAPHMEM_LOCAL_NEO4J_PORT": str(server.port),
    }
    result = CliRunner().invoke(
        main, ["neo4j", "start", "--remove-unknown-users", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["running"] is True
    assert _users(server) == ["neo4j"]


def test_load_csv_reads_no_file_and_reaches_no_address_even_outside_the_guarded_path(
    server: LocalNeo4jServer,
) -> None:
    server.start()
    listener = http.server.HTTPServer(("127.0.0.1", 0), RecordingHTTPHandler)
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    urls = [
        "file:///etc/passwd",
        "file:///password",
        f"file://{server.password_file}",
        f"http://127.0.0.1:{listener.server_port}/x.csv",
        f"http://localhost:{listener.server_port}/x.csv",
    ]
    try:
        with open_driver(server.target()) as driver:
            for url in urls:
                with pytest.raises(neo4j.exceptions.ClientError) as refused:
                    driver.execute_query("LOAD CSV FROM $url AS line RETURN line", url=url)
                assert refused.value.code == "Neo.ClientError.Statement.ExternalResourceFailed"
    finally:
        listener.shutdown()
    assert RecordingHTTPHandler.hits == []
    imports = server.home / "import"
    assert imports.is_dir() and list(imports.iterdir()) == []


class _KillingProxy:
    """A TCP relay to a server that SIGKILLs the server when a client sends ``marker``: a
    connection dropped in the middle of a command, at a known point."""

    def __init__(self, upstream: int, pid: int, marker: bytes) -> None:
        self.upstream, self.pid, self.marker = upstream, pid, marker
        self.killed = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:  # the server is gone: so is this connection
                client.close()
                continue
            threading.Thread(target=self._pipe, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, watch: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if watch and self.marker in chunk and not self.killed.is_set():
                    os.kill(self.pid, signal.SIGKILL)
                    self.killed.set()
                    self.listener.close()  # and nothing answers at the address any more
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()


def test_json_errors_are_one_object_on_stderr_when_the_server_dies_mid_migration(
    server: LocalNeo4jServer,
) -> None:
    server.start()
    pid = server.status().pid
    assert pid is not None
    target = server.target()
    upstream = int(target.uri.rsplit(":", 1)[1])
    proxy = _KillingProxy(upstream, pid, b"CREATE ")  # the first DDL statement of the schema
    env = {
        **os.environ,
        "GRAPHMEM_NEO4J_URI": f"bolt://127.0.0.1:{proxy.port}",
        "GRAPHMEM_NEO4J_USER": target.user,
        "GRAPHMEM_NEO4J_PASSWORD": target.password.get_secret_value(),
        "GRAPHMEM_NEO4J_CONNECTION_TIMEOUT": "5",
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "graphmem", "init", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        proxy.close()
    assert proxy.killed.is_set(), done.stderr
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    error = json.loads(done.stderr)  # the whole of stderr is one JSON object
    assert error["error"]["type"] in ("Neo4jUnavailableError", "DatabaseError"), error
