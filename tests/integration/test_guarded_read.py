"""The guarded read path: what someone else's Cypher may do through ``Graph.read`` and
``Graph.execute`` (and so through the analyst library), against the real Neo4j."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time
from collections.abc import Iterator
from typing import Any

import neo4j
import pytest

from graphmem.client.graph import Graph
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work
from graphmem.errors import (
    InvalidInputError,
    QueryMemoryError,
    QueryRefusedError,
    ResultTooLargeError,
    TransactionTimeoutError,
)
from graphmem.store.cypher import CypherQuery, analyst_queries
from graphmem.store.guard import guarded_read_async
from tests.helpers import RecordingHTTPHandler
from tests.integration.conftest import Client

#: Runs on Neo4j 5.26 too (the guarded read: the plan operators it allows are named per version).
pytestmark = pytest.mark.both_versions


@pytest.fixture(scope="module")
def listener() -> Iterator[int]:
    server = http.server.HTTPServer(("127.0.0.1", 0), RecordingHTTPHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_port
    server.shutdown()


def _snapshot(graph: Graph) -> dict[str, Any]:
    """What a refused query must leave as it was: the graph's counts, labels and users."""
    records, _, _ = graph.driver.execute_query(
        "MATCH (n) WITH count(n) AS nodes "
        "OPTIONAL MATCH ()-[r]->() WITH nodes, count(r) AS relationships "
        "CALL db.labels() YIELD label RETURN nodes, relationships, collect(label) AS labels",
        database_=graph.database,
        routing_=neo4j.RoutingControl.READ,
    )
    users, _, _ = graph.driver.execute_query("SHOW USERS YIELD user", database_="system")
    return {**records[0].data(), "users": sorted(u["user"] for u in users)}


REFUSED = [
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "LOAD CSV"),
    ("LOAD CSV FROM $url AS line RETURN line", "LOAD CSV"),
    ("SHOW TRANSACTIONS", "SHOW TRANSACTIONS"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE TRANSACTIONS"),
    ("CREATE USER intruder SET PASSWORD 'intruder-password'", "administration command"),
    ("SHOW USERS", "administration command"),
    ("CALL db.clearQueryCaches()", "procedure db.clearQueryCaches"),
    ("CALL dbms.listConfig()", "procedure dbms.listConfig"),
    ("CALL db.createLabel('Intruder')", "procedure db.createLabel"),
    ("MATCH (f:Fact) CALL (f) { CREATE (:Intruder) } RETURN count(*)", "CALL {} subquery"),
    ("CALL () { CREATE (x:Intruder) RETURN x } RETURN x", "plan operator Create"),
    ("UNWIND [1] AS x FOREACH (i IN [x] | CREATE (:Intruder)) RETURN x", "FOREACH"),
    ("CREATE (:Intruder) RETURN 1", "plan operator Create"),
    ("MATCH (f:Fact) SET f.text = 'overwritten' RETURN f", "plan operator SetProperty"),
    ("MATCH (f:Fact) DETACH DELETE f", "plan operator DetachDelete"),
    ("CREATE INDEX intruder FOR (n:Intruder) ON (n.x)", "plan operator CreateIndex"),
    ("PROFILE MATCH (n) RETURN n", "PROFILE"),
]


@pytest.mark.parametrize(("text", "named"), REFUSED, ids=[r[1] + ": " + r[0] for r in REFUSED])
def test_each_refusal_names_what_it_refused_and_changes_nothing(
    graph: Graph, listener: int, text: str, named: str
) -> None:
    before = _snapshot(graph)
    params = {"url": f"http://127.0.0.1:{listener}/x.csv"} if "$url" in text else {}
    with pytest.raises(QueryRefusedError) as refused:
        graph.read(text, params)
    assert named in refused.value.refused, str(refused.value)
    assert named in str(refused.value)
    assert _snapshot(graph) == before
    assert RecordingHTTPHandler.hits == []


def test_other_clients_transactions_are_neither_seen_nor_ended(graph: Graph, ns: str) -> None:
    with graph.driver.session(database=graph.database) as victim:
        tx = victim.begin_transaction()
        tx.run("CREATE (:Fact {namespace: $ns, id: 'victim', text: 'victim'})", ns=ns).consume()
        listed, _, _ = graph.driver.execute_query(
            "SHOW TRANSACTIONS YIELD transactionId, currentQuery "
            "WHERE NOT currentQuery STARTS WITH 'SHOW TRANSACTIONS' RETURN transactionId",
            database_=graph.database,
        )
        ids = [record["transactionId"] for record in listed]
        assert ids  # the victim's open transaction, at least
        with pytest.raises(QueryRefusedError, match="SHOW TRANSACTIONS"):
            graph.read("SHOW TRANSACTIONS YIELD transactionId RETURN transactionId")
        with pytest.raises(QueryRefusedError, match="TERMINATE TRANSACTIONS"):
            graph.read("TERMINATE TRANSACTIONS $ids", {"ids": ids})
        tx.commit()
    rows = graph.read(
        "MATCH (f:Fact {namespace: $ns, id: 'victim'}) RETURN f.text AS text", {"ns": ns}
    )
    assert [r["text"] for r in rows] == ["victim"]
    graph.driver.execute_query("MATCH (f:Fact {namespace: $ns}) DELETE f", ns=ns)


def test_reads_run_with_the_allowed_procedures_a_row_limit_and_a_time_limit(
    graph: Graph,
) -> None:
    assert "Fact" in [r["label"] for r in graph.read("CALL db.labels() YIELD label RETURN label")]
    components = graph.read("CALL dbms.components() YIELD name RETURN name")
    assert "Neo4j Kernel" in [r["name"] for r in components]
    hits = graph.read(
        "CALL db.index.fulltext.queryNodes('fact_text', 'nothing-matches-this') "
        "YIELD node RETURN node"
    )
    assert hits.records == [] and not hits.truncated

    rows = graph.read("UNWIND range(1, 25) AS x RETURN x", limit=10)
    assert [r["x"] for r in rows] == list(range(1, 11))
    assert rows.truncated and rows.columns == ("x",)
    assert not graph.read("UNWIND range(1, 10) AS x RETURN x", limit=10).truncated
    with pytest.raises(ResultTooLargeError, match="more than 10 rows"):
        Graph(graph.driver, graph.target, graph.schema, read_row_limit=10).execute(
            "UNWIND range(1, 11) AS x RETURN x"
        )

    # Eight billion rows: minutes of work, stopped at the one-second limit.
    slow = (
        "UNWIND range(1, 2000) AS a UNWIND range(1, 2000) AS b UNWIND range(1, 2000) AS c "
        "RETURN count(a * b * c) AS n"
    )
    began = time.monotonic()
    with pytest.raises(TransactionTimeoutError):
        graph.read(slow, timeout=1.0)
    assert time.monotonic() - began < 30


def test_bad_queries_are_invalid_input(graph: Graph) -> None:
    for text, match in [
        ("MATCH (n RETURN n", "Neo4j refused the query"),
        ("MATCH (n) RETURN n; MATCH (m) RETURN m", "Neo4j refused the query"),
        ("   ", "empty"),
    ]:
        with pytest.raises(InvalidInputError, match=match):
            graph.read(text)
    with pytest.raises(InvalidInputError, match="positive timeout and row limit"):
        graph.read("RETURN 1", limit=0)
    # A procedure or function the server does not have is the caller's mistake too.
    for text in ("CALL no.such.procedure()", "RETURN no.such.function() AS x"):
        with pytest.raises(InvalidInputError, match="Neo4j refused the query"):
            graph.read(text)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # A string doubled 40 times: 2^40 characters, past any heap (it once took the server
        # down: the per-transaction limit does not count values an expression builds).
        ("RETURN size(reduce(s = 'x', i IN range(1, 40) | s + s)) AS n", QueryMemoryError),
        # A list of a billion numbers built by an expression.
        ("RETURN size([x IN range(1, 1000000000) | x]) AS n", QueryMemoryError),
        # Counted by the per-transaction memory limit.
        ("UNWIND range(1, 100000000) AS x RETURN size(collect(x)) AS n", QueryMemoryError),
        # A billion steps of arithmetic: stopped at the time limit.
        ("RETURN reduce(s = 0, i IN range(1, 1000000000) | s + i) AS n", TransactionTimeoutError),
    ],
)
def test_a_query_that_would_exhaust_the_server_stops_with_a_typed_error(
    graph: Graph, text: str, error: type[Exception]
) -> None:
    # A query that runs out of memory gets a time limit it never needs, so that a busy machine
    # (where filling a quarter of the heap takes seconds) cannot make it a timeout instead.
    limit = 5 if error is TransactionTimeoutError else 60
    began = time.monotonic()
    with pytest.raises(error):
        graph.read(text, timeout=limit)
    assert time.monotonic() - began < limit + 2
    assert graph.read("RETURN 1 AS ok").data() == [{"ok": 1}]  # the server answers afterwards


def test_the_analyst_library_runs_on_the_guarded_path(graph: Graph, ns: str) -> None:
    for query in analyst_queries().values():
        params = dict(query.example or {})
        params["ns"] = ns
        assert graph.execute(query, **params) == []  # planned, allowed, run: nothing in ns


def test_the_async_driver_has_the_same_guard(graph: Graph) -> None:
    async def run() -> None:
        target = graph.target
        async with neo4j.AsyncGraphDatabase.driver(
            target.uri, auth=(target.user, target.password.get_secret_value())
        ) as driver:
            rows = await guarded_read_async(
                driver, graph.database, "UNWIND [1, 2, 3] AS x RETURN x", timeout=10, limit=2
            )
            assert [r["x"] for r in rows] == [1, 2] and rows.truncated
            with pytest.raises(QueryRefusedError, match="LOAD CSV"):
                await guarded_read_async(
                    driver,
                    graph.database,
                    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",
                    timeout=10,
                    limit=2,
                )

    asyncio.run(run())


def test_a_write_that_runs_out_of_memory_is_not_retried(memory: Client) -> None:
    """graphmem's own transactions run under the server's memory limit too: one over it ends
    at once with the typed error (the driver would retry a transient error for 30 s)."""
    hog = CypherQuery(
        name="hog",
        text="UNWIND range(1, 100000000) AS x WITH collect(x) AS xs RETURN size(xs) AS n",
        mode="write",
        params=(),
    )

    def work() -> Work[Rows]:
        return (yield Run(hog, {}))

    def plan() -> Plan[Rows]:
        rows: Rows = yield Transaction("write", work)
        return rows

    began = time.monotonic()
    with pytest.raises(QueryMemoryError, match="more memory"):
        memory._run(plan())
    assert time.monotonic() - began < 15
    assert memory.stats().facts == 0  # the server answers afterwards


def test_the_async_client_reads_through_its_graph_as_the_sync_one_does(
    graph: Graph, test_settings: Any, embedder: Any, ns: str
) -> None:
    from graphmem import AsyncMemory
    from graphmem.errors import ClientUsageError, QueryRefusedError, ResultTooLargeError

    client = AsyncMemory(test_settings, target=graph.target, embedder=embedder, ns=ns)
    with pytest.raises(ClientUsageError, match="not connected"):
        _ = client.graph

    async def scenario() -> None:
        async with client:
            await client.remember_many(["one", "two", "three"])
            count = "MATCH (f:Fact {ns: $ns}) RETURN count(f) AS n"
            rows = await client.graph.read(count, {"ns": ns})
            assert [dict(r) for r in rows.records] == [{"n": 3}]
            records = await client.graph.execute("UNWIND range(1, 3) AS i RETURN i")
            assert [r["i"] for r in records] == [1, 2, 3]
            with pytest.raises(ResultTooLargeError):
                await client.graph.execute("UNWIND range(1, 20000) AS i RETURN i")
            with pytest.raises(QueryRefusedError):
                await client.graph.read("MATCH (f:Fact {ns: $ns}) SET f.text = 'x'", {"ns": ns})
            assert client.graph.schema.embedder_model == embedder.model_id

    asyncio.run(scenario())
