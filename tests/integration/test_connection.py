"""Connection failures become clear, typed errors."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import neo4j
import pytest
from pydantic import SecretStr

from graphmem.connection import Neo4jTarget, open_async_driver, open_driver
from graphmem.errors import Neo4jUnavailableError
from graphmem.graph import Graph
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

        def verify_connectivity() -> None:
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
