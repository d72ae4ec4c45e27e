"""The graph under a :class:`~graphmem.Memory`, read and written directly by name: what a
measuring run needs beside the client (a bare baseline write, the stored vectors of a
namespace, the counts of the whole graph), with each query a headed ``.cypher`` file of
``graphmem/store/queries/`` like every other."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from graphmem.store import cypher, db

if TYPE_CHECKING:
    from graphmem.client import Memory
    from graphmem.client.graph import Graph


def _graph(on: Memory | Graph) -> Graph:
    """The open graph of a client (connecting it if needed), or the graph itself."""
    from graphmem.client.graph import Graph

    return on if isinstance(on, Graph) else on.graph


def run_query(on: Memory | Graph, name: str, /, **params: Any) -> list[dict[str, Any]]:
    """Run the named query with ``params`` in its own transaction (routed by its mode) on the
    graph ``on`` (a :class:`~graphmem.Memory` or its ``graph``) is connected to, and return
    its rows."""
    graph = _graph(on)
    records = db.execute(graph.driver, graph.database, cypher.query(name), **params)
    return [record.data() for record in records]


def stream_query(on: Memory | Graph, name: str, /, **params: Any) -> Iterator[dict[str, Any]]:
    """The rows of the named read query on ``on`` (as :func:`run_query`), one at a time as the
    server sends them (for results too large to hold twice)."""
    query = cypher.query(name)
    query.check_params(params)
    graph = _graph(on)
    with (
        db.driver_errors(),
        graph.driver.session(database=graph.database, default_access_mode="READ") as session,
    ):
        for record in session.run(query.text, params):
            yield record.data()


def server_version(on: Memory | Graph) -> str:
    """The Neo4j version of the server ``on`` (as :func:`run_query`) is connected to
    ("unknown" if it says none)."""
    rows = run_query(on, "server_version")
    return str(rows[0]["version"]) if rows else "unknown"


__all__ = ["run_query", "server_version", "stream_query"]
