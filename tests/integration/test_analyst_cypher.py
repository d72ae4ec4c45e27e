"""The analyst library in cypher/ runs against the real schema, read-only."""

from __future__ import annotations

from pathlib import Path

import neo4j

from graphmem.cypher import load_dir
from graphmem.graph import Graph

ANALYST_DIR = Path(__file__).resolve().parents[2] / "cypher"


def test_every_analyst_query_runs_as_a_read(graph: Graph, ns: str) -> None:
    graph.driver.execute_query(
        "CREATE (a:Fact {id: 'a', ns: $ns, text: 'old', status: 'superseded', "
        " recorded_at: datetime('2025-01-01T00:00:00Z'),"
        " retired_at: datetime('2026-02-01T00:00:00Z'),"
        " valid_to: datetime('2026-02-01T00:00:00Z')})"
        "<-[:SUPERSEDES {at: datetime('2026-02-01T00:00:00Z'), actor: 'api', reason: 'moved'}]-"
        "(b:Fact {id: 'b', ns: $ns, text: 'new', status: 'active', "
        " recorded_at: datetime('2026-02-01T00:00:00Z')})",
        ns=ns,
        database_=graph.database,
    )
    queries = load_dir(ANALYST_DIR)
    assert len(queries) >= 4
    for q in queries.values():
        params = {**(q.example or {}), "ns": ns}
        if "fact_id" in params:
            params["fact_id"] = "b"
        with graph.driver.session(
            database=graph.database, default_access_mode=neo4j.READ_ACCESS
        ) as session:
            result = session.run(q.text, params)
            records = list(result)
            summary = result.consume()
        assert summary.query_type == "r", q.name
        assert not summary.counters.contains_updates, q.name
        if q.name == "beliefs_as_of":
            assert [r["id"] for r in records] == ["a"]  # as of 2026-01-01
            assert records[0]["valid_to"] is None  # open-ended then; closed by the update
        if q.name == "fact_history":
            assert [r["id"] for r in records] == ["a", "b"]
            assert records[0]["replaced_by"] == "b" and records[0]["reason"] == "moved"
