"""Fixtures: a real Neo4j for the integration tests, found or started in this order:

1. ``GRAPHMEM_TEST_NEO4J_URI`` (+ ``GRAPHMEM_TEST_NEO4J_USER`` / ``_PASSWORD`` / ``_DATABASE``):
   an existing server. It must be disposable: schema tests wipe it.
2. testcontainers (``neo4j:2026.09.0-community``) when a Docker engine answers.
3. the local server, started through the same code as ``graphmem neo4j start``, in a
   temporary home on a free port, and stopped at the end of the session.

A Neo4j that cannot be had fails the integration tests with the reason; they are never skipped.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest
from pydantic import SecretStr

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.embed.onnx_embedder import OnnxEmbedder
from graphmem.servers.connection import Neo4jTarget, open_driver
from graphmem.servers.docker import docker_engine_available
from graphmem.servers.local import LocalNeo4jServer
from graphmem.settings import GraphmemSettings, load_settings
from tests.helpers import free_port, wipe_database

_INTEGRATION_DIR = Path(__file__).parent / "integration"


#: ``GRAPHMEM_TEST_CLIENTS=sync`` (or ``async``) runs the tests of the ``memory`` fixture through
#: that client only. ``make integration-5.26`` sets it: both clients run the same statements, so
#: another server version needs one of them, and the default run keeps both.
_CLIENTS_ENV = "GRAPHMEM_TEST_CLIENTS"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _INTEGRATION_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
    only = os.environ.get(_CLIENTS_ENV)
    if not only:
        return
    if only not in ("sync", "async"):
        raise pytest.UsageError(f"{_CLIENTS_ENV} must be sync or async, not {only!r}")
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        kind = callspec.params.get("memory") if callspec is not None else None
        (dropped if kind not in (None, only) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def test_settings(tmp_path_factory: pytest.TempPathFactory) -> GraphmemSettings:
    """Settings for the test server: a temporary home and a free port; the real build cache."""
    return load_settings(
        neo4j_uri="local",
        local_neo4j_home=tmp_path_factory.mktemp("neo4j-home"),
        local_neo4j_port=free_port(),
    )


@pytest.fixture(scope="session")
def neo4j_target(test_settings: GraphmemSettings) -> Iterator[Neo4jTarget]:
    uri = os.environ.get("GRAPHMEM_TEST_NEO4J_URI")
    if uri:
        yield Neo4jTarget(
            uri=uri,
            user=os.environ.get("GRAPHMEM_TEST_NEO4J_USER", "neo4j"),
            password=SecretStr(os.environ.get("GRAPHMEM_TEST_NEO4J_PASSWORD", "")),
            database=os.environ.get("GRAPHMEM_TEST_NEO4J_DATABASE", "neo4j"),
        )
        return
    if docker_engine_available():
        yield from _testcontainer()
        return
    server = LocalNeo4jServer(test_settings)
    try:
        server.start()
    except Exception as exc:
        pytest.fail(f"could not start the local Neo4j for the tests: {exc}", pytrace=False)
    try:
        yield server.target()
    finally:
        server.stop()


def _testcontainer() -> Iterator[Neo4jTarget]:
    from testcontainers.neo4j import Neo4jContainer

    password = uuid.uuid4().hex
    container = Neo4jContainer("neo4j:2026.09.0-community", password=password)
    container.with_env("NEO4J_dbms_usage__report_enabled", "false")
    try:
        container.start()
    except Exception as exc:
        pytest.fail(f"could not start the Neo4j test container: {exc}", pytrace=False)
    try:
        yield Neo4jTarget(
            uri=container.get_connection_url(),
            user="neo4j",
            password=SecretStr(password),
            mode="docker",
        )
    finally:
        container.stop()


@pytest.fixture(scope="session")
def driver(neo4j_target: Neo4jTarget) -> Iterator[neo4j.Driver]:
    try:
        drv = open_driver(neo4j_target)
    except Exception as exc:
        pytest.fail(f"Neo4j at {neo4j_target.describe()} is unusable: {exc}", pytrace=False)
    with drv:
        yield drv


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real default embedder (all-MiniLM-L6-v2 from site-packages on ONNX Runtime, int8),
    loaded once."""
    return OnnxEmbedder()


@pytest.fixture(scope="session")
def graph(
    driver: neo4j.Driver,
    neo4j_target: Neo4jTarget,
    test_settings: GraphmemSettings,
    embedder: Embedder,
) -> Iterator[Graph]:
    """A graph with the schema applied for the default embedder (wiped once at start)."""
    wipe_database(driver, neo4j_target.database)
    with Graph.open(test_settings, embedder, target=neo4j_target) as opened:
        yield opened


@pytest.fixture
def fresh_graph(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> Iterator[Graph]:
    """An empty database without any schema; the schema is re-applied afterwards."""
    wipe_database(graph.driver, graph.database)
    yield graph
    wipe_database(graph.driver, graph.database)
    with Graph.open(test_settings, embedder, target=graph.target):
        pass


@pytest.fixture
def ns() -> str:
    """A namespace of this test's own."""
    return f"test-{uuid.uuid4().hex[:12]}"
