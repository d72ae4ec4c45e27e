"""Connection failures become clear, typed errors."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import neo4j
import pytest
from pydantic import SecretStr

from graphmem.client.graph import Graph
from graphmem.errors import ConfigurationError, Neo4jUnavailableError
from graphmem.servers.connection import Neo4jTarget, open_async_driver, open_driver, wait_for_bolt
from tests.helpers import free_port


def test_wrong_password_is_reported_as_refused_credentials(graph: Graph) -> None:
    wrong = Neo4jTarget(
        uri=graph.target.uri,
        user="neo4j",
        password=SecretStr("not-the-password"),
        mode="external",
    )
    with pytest.raises(Neo4jUnavailableError, match="refused the credentials of user 'neo4j'"):
        open_driver(wrong)


def test_waiting_for_bolt_ends_at_refused_credentials(graph: Graph) -> None:
    # A server that refuses the password does not accept it on the next try either: `graphmem
    # neo4j start` of a running server whose password file was edited used to ask again for
    # the whole start timeout (300 s), counting towards locking the user out.
    wrong = Neo4jTarget(uri=graph.target.uri, user="neo4j", password=SecretStr("not-the-password"))
    began = time.monotonic()
    with pytest.raises(Neo4jUnavailableError, match="refused the credentials"):
        wait_for_bolt(wrong, timeout=120)
    assert time.monotonic() - began < 30


def test_a_listener_that_never_speaks_bolt_fails_within_the_connection_timeout() -> None:
    # It accepts the TCP connection (the kernel does, from its backlog) and never answers the
    # Bolt handshake: the connection timeout bounds that wait too (the driver's own bound for
    # it is 60 s).
    with socket.create_server(("127.0.0.1", 0)) as silent:
        target = Neo4jTarget(
            uri=f"bolt://127.0.0.1:{silent.getsockname()[1]}",
            user="neo4j",
            password=SecretStr("whatever1"),
        )
        began = time.monotonic()
        with pytest.raises(Neo4jUnavailableError, match="no Neo4j answers"):
            open_driver(target, connection_timeout=2)
        assert time.monotonic() - began < 20

        async def open_async() -> None:
            await open_async_driver(target, connection_timeout=2)

        began = time.monotonic()
        with pytest.raises(Neo4jUnavailableError, match="no Neo4j answers"):
            asyncio.run(open_async())
        assert time.monotonic() - began < 20


def test_a_uri_the_driver_refuses_is_a_configuration_error() -> None:
    # Built directly (the settings refuse it first): still an error of graphmem's, no traceback.
    target = Neo4jTarget(
        uri="bolt://127.0.0.1:7687?region=eu", user="neo4j", password=SecretStr("whatever1")
    )
    with pytest.raises(ConfigurationError, match="cannot be used"):
        open_driver(target)
    with pytest.raises(ConfigurationError, match="cannot be used"):
        asyncio.run(open_async_driver(target))


def test_nothing_listening_says_how_to_start_it() -> None:
    target = Neo4jTarget(
        uri=f"bolt://127.0.0.1:{free_port()}",
        user="neo4j",
        password=SecretStr("whatever1"),
        mode="local",
    )
    with pytest.raises(Neo4jUnavailableError, match="graphmem neo4j start"):
        open_driver(target, connection_timeout=2)


def test_a_driver_whose_connecting_is_cancelled_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    # A server that accepts the connection and never answers the handshake: the connect is
    # cancelled while it waits, and the driver it made must not be left open.
    made: list[neo4j.AsyncDriver] = []
    real_driver = neo4j.AsyncGraphDatabase.driver

    def recording(*args: Any, **kwargs: Any) -> neo4j.AsyncDriver:
        made.append(real_driver(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(neo4j.AsyncGraphDatabase, "driver", recording)
    accepted = threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def accept() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(20)  # the handshake
                accepted.set()
                conn.recv(20)  # until the client goes away

        listener = threading.Thread(target=accept, daemon=True)
        listener.start()
        target = Neo4jTarget(
            uri=f"bolt://127.0.0.1:{port}", user="neo4j", password=SecretStr("whatever1")
        )

        async def cancelled_while_connecting() -> None:
            connecting = asyncio.create_task(open_async_driver(target, connection_timeout=60))
            assert await asyncio.to_thread(accepted.wait, 60)
            connecting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await connecting

        asyncio.run(cancelled_while_connecting())
        listener.join(60)
    assert len(made) == 1 and made[0]._closed


def test_a_driver_whose_connecting_is_interrupted_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[neo4j.Driver] = []
    real_driver = neo4j.GraphDatabase.driver

    def interrupted(*args: Any, **kwargs: Any) -> neo4j.Driver:
        driver = real_driver(*args, **kwargs)

        def verify_connectivity(**_config: Any) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(driver, "verify_connectivity", verify_connectivity)
        made.append(driver)
        return driver

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", interrupted)
    target = Neo4jTarget(
        uri=f"bolt://127.0.0.1:{free_port()}", user="neo4j", password=SecretStr("whatever1")
    )
    with pytest.raises(KeyboardInterrupt):
        open_driver(target)
    assert len(made) == 1 and made[0]._closed
