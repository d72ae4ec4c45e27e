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


def run_query(memory: Memory, name: str, /, **params: Any) -> list[dict[str, Any]]:
    """Run the named query with ``params`` in its own transaction (routed by its mode) on the
    graph ``memory`` is connected to, and return its rows."""
    graph = memory.graph
    records = db.execute(graph.driver, graph.database, cypher.query(name), **params)
    return [record.data() for record in records]


def stream_query(memory: Memory, name: str, /, **params: Any) -> Iterator[dict[str, Any]]:
    """The rows of the named read query, one at a time as the server sends them (for results
    too large to hold twice)."""
    query = cypher.query(name)
    query.check_params(params)
    graph = memory.graph
    with (
        db.driver_errors(),
        graph.driver.session(database=graph.database, default_access_mode="READ") as session,
    ):
        for record in session.run(query.text, params):
            yield record.data()


def server_version(memory: Memory) -> str:
    """The Neo4j version of the server ``memory`` is connected to ("unknown" if it says
    none)."""
    rows = run_query(memory, "server_version")
    return str(rows[0]["version"]) if rows else "unknown"


__all__ = ["run_query", "server_version", "stream_query"]
