"""The analyst library in cypher/ runs against the real schema, read-only."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import neo4j
import pytest

from graphmem.client.graph import Graph
from graphmem.errors import InvalidInputError
from graphmem.store.cypher import CypherQuery, analyst_queries
from tests.integration.conftest import Client


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
    queries = analyst_queries()
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


def test_fact_history_agrees_with_the_client(
    graph: Graph, ns: str, client_factory: Callable[..., Client]
) -> None:
    memory = client_factory("sync", ns=ns)
    laptop = memory.remember("The user has a ThinkPad.")
    phone = memory.remember("The user has a Pixel.")
    both = memory.remember("The user has an iPad only.", supersedes=[laptop.id, phone.id])
    newest = memory.remember("The user has an iPad Pro.", supersedes=[both.id])
    fact_history = analyst_queries()["fact_history"]
    for fact in (laptop, phone, both, newest):
        records, _, _ = graph.driver.execute_query(
            fact_history.text,
            {"ns": ns, "fact_id": fact.id},
            database_=graph.database,
            routing_=neo4j.RoutingControl.READ,
        )
        assert [r["id"] for r in records] == [f.id for f in memory.history(fact.id).facts]


def test_analyst_times_need_a_zone(graph: Graph, ns: str) -> None:
    graph.driver.execute_query(
        "CREATE (:Fact {id: $ns + '-a', ns: $ns, text: 'the office opens', status: 'active',"
        " recorded_at: datetime('2026-01-01T12:00:00Z'),"
        " valid_from: datetime('2026-03-15T09:00:00Z')})",
        ns=ns,
        database_=graph.database,
    )
    queries = analyst_queries()
    for name, param in (("beliefs_as_of", "as_of"), ("true_at", "valid_at")):
        q = queries[name]

        def ids(when: object, q: CypherQuery = q, param: str = param) -> list[str]:
            return [r["id"] for r in graph.execute(q, ns=ns, limit=10, **{param: when})]

        # The same instant in any zone, as text (offset or zone id) or as a datetime.
        for when in (
            "2026-03-15T10:00:00Z",
            "2026-03-15T11:00:00+01:00",
            "2026-03-15T06:00-0400",
            "2026-03-15T10:00:00[Europe/Lisbon]",
            datetime(2026, 3, 15, 10, tzinfo=UTC),
            str(datetime(2026, 3, 15, 10, tzinfo=UTC)),  # a space for the T
            " 2026-03-15T10:00:00Z\n",
        ):
            assert ids(when) == [f"{ns}-a"], (name, when)
        assert ids("2026-03-15T08:59:00Z") == ([] if name == "true_at" else [f"{ns}-a"])
        with pytest.raises(InvalidInputError, match="no time given"):
            ids(None)
        # Without a zone, Neo4j would read the time as UTC: refused instead.
        naive_times = ("2026-03-15T10:00:00", "2026-03-15 10:00", "2026-03-15", 5)
        for naive in (*naive_times, datetime(2026, 3, 15, 10)):
            with pytest.raises(InvalidInputError, match="not a time with a zone"):
                ids(naive)
    with pytest.raises(InvalidInputError, match="missing parameters"):
        graph.execute(queries["true_at"], ns=ns, limit=10)
    # Values Bolt cannot carry are refused as input too, not as the driver's own errors.
    q = queries["beliefs_as_of"]
    for value, why in (
        (Decimal("1.5"), "Decimal"),
        (2**70, "too large"),
        ({1: "a"}, "Map keys must be strings"),
    ):
        with pytest.raises(InvalidInputError, match=f"cannot be sent to Neo4j: .*{why}"):
            graph.execute(q, ns=ns, as_of="2026-03-15T10:00:00Z", limit=value)


def test_analyst_times_in_a_zones_repeated_hour_keep_their_offset(graph: Graph, ns: str) -> None:
    # On 2026-10-25 Lisbon's clocks go back from 02:00 (+01:00) to 01:00 (+00:00), so 01:30
    # happens twice. The offset says which: 01:30+00:00 is 01:30Z, the later one. Neo4j's
    # datetime({datetime: t, timezone: 'Z'}) reads t's local time again and takes the
    # earlier, an hour before the instant given: a query converting that way would answer
    # for 00:30Z.
    graph.driver.execute_query(
        "CREATE (:Fact {id: $ns + '-a', ns: $ns, text: 'the clocks went back',"
        " status: 'active', recorded_at: datetime('2026-10-25T01:00:00Z'),"
        " valid_from: datetime('2026-10-25T01:00:00Z')})",
        ns=ns,
        database_=graph.database,
    )
    queries = analyst_queries()
    later = datetime(2026, 10, 25, 1, 30, tzinfo=UTC)
    for when in (
        "2026-10-25T01:30:00+00:00[Europe/Lisbon]",
        "2026-10-25T01:30:00Z[Europe/Lisbon]",  # as Neo4j writes that instant in Lisbon
        later,
    ):
        for name, param in (("beliefs_as_of", "as_of"), ("true_at", "valid_at")):
            rows = graph.execute(queries[name], ns=ns, limit=10, **{param: when})
            assert [r["id"] for r in rows] == [f"{ns}-a"], (name, when)
        rows = graph.execute(
            queries["changes_between"],
            ns=ns,
            since="2026-10-25T00:45:00Z",
            until=when,
            limit=10,
        )
        assert [r["id"] for r in rows] == [f"{ns}-a"], ("changes_between", when)
    # The earlier 01:30 (+01:00) is 00:30Z, before the fact.
    earlier = "2026-10-25T01:30:00+01:00[Europe/Lisbon]"
    assert graph.execute(queries["beliefs_as_of"], ns=ns, limit=10, as_of=earlier) == []


def test_changes_between_two_times_explain_the_beliefs_at_both(
    graph: Graph, ns: str, client_factory: Callable[..., Client]
) -> None:
    memory = client_factory("sync", ns=ns)
    queries = analyst_queries()
    google = memory.remember("The user works at Google.")
    lisbon = memory.remember("The user lives in Lisbon.")
    start = memory.get(lisbon.id).recorded_at
    microsoft = memory.remember(
        "The user works at Microsoft.", supersedes=[google.id], reason="new job"
    )
    bees = memory.remember("The user keeps bees.")
    porto = memory.remember("The user lives in Porto.", supersedes=[lisbon.id])
    end = porto.recorded_at
    memory.remember("The user has a cat.")  # after the window
    graph.driver.execute_query(  # an erasure inside the window leaves only a tombstone
        "CREATE (:Tombstone {ns: $ns, fact_id: 'gone', text_hash: 'h', reason: 'user asked',"
        " at: $at})",
        ns=ns,
        at=end,
        database_=graph.database,
    )

    rows = graph.execute(queries["changes_between"], ns=ns, since=start, until=end, limit=100)
    changes = [(r["change"], r["id"], r["related"], r["reason"]) for r in rows]
    assert changes == [
        ("recorded", microsoft.id, [google.id], "new job"),
        ("retired", google.id, [microsoft.id], "new job"),
        ("recorded", bees.id, [], None),
        ("recorded", porto.id, [lisbon.id], None),
        ("retired", lisbon.id, [porto.id], None),
        ("forgotten", "gone", [], "user asked"),
    ]
    assert [r["at"] for r in rows] == sorted(r["at"] for r in rows)
    assert rows[0]["actor"] == "api" and rows[0]["text"] == "The user works at Microsoft."

    def believed(at: datetime) -> set[str]:
        q = queries["beliefs_as_of"]
        return {r["id"] for r in graph.execute(q, ns=ns, as_of=at, limit=1000)}

    recorded = {r["id"] for r in rows if r["change"] == "recorded"}
    retired = {r["id"] for r in rows if r["change"] == "retired"}
    assert believed(end) == (believed(start) | recorded) - retired
    # Empty when nothing changed; a time without a zone is refused.
    assert graph.execute(queries["changes_between"], ns=ns, since=end, until=end, limit=10) == []
    with pytest.raises(InvalidInputError, match="not a time with a zone"):
        graph.execute(queries["changes_between"], ns=ns, since="2026-01-01", until=end, limit=10)
    # One instant in two spellings is an empty window, not one given backwards.
    lisbon_summer = end.astimezone(timezone(timedelta(hours=1)))
    q = queries["changes_between"]
    assert graph.execute(q, ns=ns, since=lisbon_summer, until=end, limit=10) == []
    assert graph.execute(q, ns=ns, since=end, until=lisbon_summer.isoformat(), limit=10) == []
    # A window given backwards is refused, not answered with "nothing changed".
    with pytest.raises(InvalidInputError, match=r"until \(.+\) is before since"):
        graph.execute(queries["changes_between"], ns=ns, since=end, until=start, limit=10)
