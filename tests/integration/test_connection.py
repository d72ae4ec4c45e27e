"""Connection failures become clear, typed errors."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from graphmem.connection import Neo4jTarget, open_driver
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
