"""The analyst library in cypher/ runs against the real schema, read-only, and answers the
scripted history of tests/history.py exactly."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import neo4j
import pytest

from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.errors import InvalidInputError
from graphmem.settings import GraphmemSettings
from graphmem.store.cypher import CypherQuery, analyst_queries
from graphmem.testing.llm_stub import StubLLMServer
from tests.history import MESSAGES, REASONS, TEXTS, VALID, History, stub_answers
from tests.history import llm_settings as history_settings
from tests.integration.conftest import Client, close_client, make_client


@pytest.mark.both_versions
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


# --- The whole library against the scripted history (tests/history.py) ---------------------

LIBRARY = analyst_queries()


def run(graph: Graph, name: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of library query ``name`` on the guarded read path, neo4j times as Python's."""
    return [
        {key: _native(value) for key, value in record.data().items()}
        for record in graph.execute(LIBRARY[name], **params)
    ]


def _native(value: Any) -> Any:
    if isinstance(value, list):
        return [_native(v) for v in value]
    to_native = getattr(value, "to_native", None)
    return to_native() if to_native is not None else value


def _fact_times(h: History) -> dict[str, tuple[datetime, datetime | None]]:
    """Each fact of the history: when it was recorded and retired (None: believed now)."""
    recorded = {key: h.at["ingest"] if key in ("tea", "coffee") else h.at[key] for key in TEXTS}
    retired = {
        "emp1": h.at["emp2"],
        "emp2": h.at["emp3"],
        "emp3": h.at["emp4"],
        "hike2": h.at["merge"],
        "london": h.at["resolve"],
        "cat": h.at["retract"],
    }
    return {key: (recorded[key], retired.get(key)) for key in TEXTS}


def _after_or_open(end: datetime | None, probe: datetime) -> bool:
    return end is None or end > probe


def _probes(h: History) -> list[datetime]:
    return [
        h.at["emp1"] - timedelta(seconds=1),
        h.between("emp1", "emp2"),
        h.between("hike2", "merge"),
        h.between("resolve", "cat"),
        h.between("phone", "call"),
        h.at["forget"] + timedelta(seconds=1),
    ]


def _after(h: History) -> datetime:
    return max(h.at.values()) + timedelta(hours=1)


def test_beliefs_about_searches_only_what_is_believed(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    names = {v: k for k, v in ids.items()}

    def found(query: str, limit: int = 100) -> list[dict[str, Any]]:
        return run(graph, "beliefs_about", ns=h.ns, query=query, limit=limit)

    rows = found("works OR hiking")
    # The replaced employers and the merged duplicate are not believed any more.
    assert sorted(names[r["id"]] for r in rows) == ["emp4", "hike1"]
    assert {r["text"] for r in rows} == {TEXTS["emp4"], TEXTS["hike1"]}
    assert all(r["status"] == "active" and r["score"] > 0 for r in rows)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    emp4 = next(r for r in rows if r["id"] == ids["emp4"])
    assert (emp4["recorded_at"], emp4["valid_from"], emp4["source"]) == (
        h.at["emp4"],
        VALID["emp4"],
        "hr",
    )
    believed = ["emp4", "hike1", "veg", "fish", "paris", "tea", "coffee", "call"]
    assert sorted(names[r["id"]] for r in found("Ada")) == sorted(believed)
    assert [names[r["id"]] for r in found("hik*")] == ["hike1"]
    assert [names[r["id"]] for r in found('"green tea"')] == ["tea"]
    assert len(found("Ada", limit=3)) == 3
    assert found("phone OR 555") == []  # forgotten: out of the index
    with pytest.raises(InvalidInputError, match="ParseException"):  # malformed Lucene
        found("works AND (")


def test_beliefs_as_of_at_every_step(graph: Graph, history: History) -> None:
    h = history
    names = {v: k for k, v in h.ids.items()}
    times = _fact_times(h)
    # The forgotten phone number was believed until its erasure.
    ends = {key: h.at["forget"] if key == "phone" else ret for key, (_, ret) in times.items()}
    for probe in _probes(h):
        rows = run(graph, "beliefs_as_of", ns=h.ns, as_of=probe, limit=100)
        expected = sorted(
            (
                key
                for key, (rec, _) in times.items()
                if rec <= probe and _after_or_open(ends[key], probe)
            ),
            key=lambda k: (-times[k][0].timestamp(), h.ids[k]),
        )
        assert [names[r["id"]] for r in rows] == expected, probe
        for row in rows:
            key = names[row["id"]]
            assert row["recorded_at"] == times[key][0]
            if key == "phone":  # believed then, erased since: no words left
                assert (row["status"], row["text"], row["retired_at"]) == ("forgotten", None, None)
            else:
                assert row["text"] == TEXTS[key] and row["retired_at"] == times[key][1]
    # emp1 was open-ended while believed; its supersession closed it later.
    (emp1,) = run(graph, "beliefs_as_of", ns=h.ns, as_of=h.between("emp1", "emp2"), limit=10)
    assert (emp1["status"], emp1["valid_from"], emp1["valid_to"]) == (
        "superseded",
        VALID["emp1"],
        None,
    )
    assert emp1["source"] == "hr"


def test_true_at_and_true_at_as_of(graph: Graph, history: History) -> None:
    h = history
    names = {v: k for k, v in h.ids.items()}
    undated = ["call", "fish", "veg", "hike1"]  # newest recorded first

    def true_at(valid_at: str) -> list[str]:
        return [
            names[r["id"]] for r in run(graph, "true_at", ns=h.ns, valid_at=valid_at, limit=100)
        ]

    def as_of(valid_at: str, when: datetime) -> list[dict[str, Any]]:
        return run(graph, "true_at_as_of", ns=h.ns, valid_at=valid_at, as_of=when, limit=100)

    assert true_at("2020-01-01T00:00:00Z") == ["emp1", "london", *undated]
    assert true_at("2022-01-01T00:00:00Z") == ["emp2", "london", *undated]
    tea_coffee = sorted(["tea", "coffee"], key=lambda k: h.ids[k])
    assert true_at("2026-06-01T00:00:00Z") == [*tea_coffee, "emp4", "paris", *undated]
    rows = run(graph, "true_at", ns=h.ns, valid_at="2022-01-01T00:00:00Z", limit=100)
    assert (rows[0]["status"], rows[0]["valid_from"], rows[0]["valid_to"]) == (
        "superseded",
        VALID["emp2"],
        VALID["emp3"],
    )

    # Before Globex was recorded, Acme was believed open-ended: true in 2022 then.
    (row,) = as_of("2022-01-01T00:00:00Z", h.between("emp1", "emp2"))
    assert (names[row["id"]], row["valid_to"], row["retired_at"]) == ("emp1", None, h.at["emp2"])
    (row,) = as_of("2022-01-01T00:00:00Z", h.between("emp2", "emp3"))
    assert (names[row["id"]], row["valid_to"]) == ("emp2", None)
    assert as_of("2022-01-01T00:00:00Z", h.at["emp1"] - timedelta(seconds=1)) == []
    # After Paris was recorded but before the conflict was resolved: London still believed
    # open-ended; Initech within the interval its supersession closed.
    assert [
        names[r["id"]] for r in as_of("2024-12-01T00:00:00Z", h.between("paris", "resolve"))
    ] == [
        "paris",
        "emp3",
        "london",
        "fish",
        "veg",
        "hike1",
    ]
    assert [names[r["id"]] for r in as_of("2024-12-01T00:00:00Z", h.between("resolve", "cat"))] == [
        "paris",
        "emp3",
        "fish",
        "veg",
        "hike1",
    ]
    # As of now, both clocks agree with true_at.
    for valid_at in ("2020-01-01T00:00:00Z", "2022-01-01T00:00:00Z", "2026-06-01T00:00:00Z"):
        assert [names[r["id"]] for r in as_of(valid_at, _after(h))] == true_at(valid_at)


def test_changes_between_steps_of_the_history(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    names = {v: k for k, v in ids.items()}

    def changes(since: datetime, until: datetime) -> list[tuple[Any, ...]]:
        rows = run(graph, "changes_between", ns=h.ns, since=since, until=until, limit=100)
        return [
            (
                r["at"],
                r["change"],
                names[r["id"]],
                r["text"],
                r["status"],
                [names[x] for x in r["related"]],
                r["actor"],
                r["reason"],
            )
            for r in rows
        ]

    assert changes(h.between("emp1", "emp2"), h.between("emp3", "emp4")) == [
        (
            h.at["emp2"],
            "recorded",
            "emp2",
            TEXTS["emp2"],
            "superseded",
            ["emp1"],
            "api",
            "changed jobs",
        ),
        (
            h.at["emp2"],
            "retired",
            "emp1",
            TEXTS["emp1"],
            "superseded",
            ["emp2"],
            "api",
            "changed jobs",
        ),
        (
            h.at["emp3"],
            "recorded",
            "emp3",
            TEXTS["emp3"],
            "superseded",
            ["emp2"],
            "api",
            "changed jobs again",
        ),
        (
            h.at["emp3"],
            "retired",
            "emp2",
            TEXTS["emp2"],
            "superseded",
            ["emp3"],
            "api",
            "changed jobs again",
        ),
    ]
    tea_coffee = sorted(["tea", "coffee"], key=lambda k: ids[k])
    assert changes(h.between("hike2", "merge"), _after(h)) == [
        (
            h.at["merge"],
            "retired",
            "hike2",
            TEXTS["hike2"],
            "merged",
            ["hike1"],
            h.run_id,
            REASONS["merge"],
        ),
        (h.at["veg"], "recorded", "veg", TEXTS["veg"], "active", [], "api", None),
        (h.at["fish"], "recorded", "fish", TEXTS["fish"], "active", [], "api", None),
        (h.at["london"], "recorded", "london", TEXTS["london"], "superseded", [], "api", None),
        (
            h.at["paris"],
            "recorded",
            "paris",
            TEXTS["paris"],
            "active",
            ["london"],
            "api",
            REASONS["resolve"],
        ),
        (
            h.at["resolve"],
            "retired",
            "london",
            TEXTS["london"],
            "superseded",
            ["paris"],
            "api",
            REASONS["resolve"],
        ),
        (h.at["cat"], "recorded", "cat", TEXTS["cat"], "retracted", [], "api", None),
        (
            h.at["retract"],
            "retired",
            "cat",
            TEXTS["cat"],
            "retracted",
            [],
            "api",
            REASONS["retract"],
        ),
        *[
            (h.at["ingest"], "recorded", k, TEXTS[k], "active", [], "extractor", None)
            for k in tea_coffee
        ],
        (h.at["phone"], "recorded", "phone", None, "forgotten", [], None, None),
        (h.at["call"], "recorded", "call", TEXTS["call"], "active", [], "api", None),
        (h.at["forget"], "forgotten", "phone", None, "forgotten", [], "api", REASONS["forget"]),
    ]

    def believed(at: datetime) -> set[str]:
        return {r["id"] for r in run(graph, "beliefs_as_of", ns=h.ns, as_of=at, limit=100)}

    probes = _probes(h)
    for since, until in itertools.pairwise(probes):
        rows = run(graph, "changes_between", ns=h.ns, since=since, until=until, limit=100)
        added = {r["id"] for r in rows if r["change"] == "recorded"}
        gone = {r["id"] for r in rows if r["change"] in ("retired", "forgotten")}
        assert believed(until) == (believed(since) | added) - gone, (since, until)


def _chain(h: History) -> list[dict[str, Any]]:
    """fact_history's rows for the employer line, oldest first."""
    keys = ["emp1", "emp2", "emp3", "emp4"]
    reasons = [REASONS["emp2"], REASONS["emp3"], REASONS["emp4"], None]
    return [
        {
            "id": h.ids[key],
            "text": TEXTS[key],
            "status": "active" if key == "emp4" else "superseded",
            "recorded_at": h.at[key],
            "retired_at": h.at[nxt] if nxt else None,
            "replaced_by": h.ids[nxt] if nxt else None,
            "replaced_at": h.at[nxt] if nxt else None,
            "actor": "api" if nxt else None,
            "reason": reason,
        }
        for key, nxt, reason in zip(keys, [*keys[1:], None], reasons, strict=True)
    ]


def test_fact_history_and_lineage_of_the_history(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    for key in ("emp1", "emp3", "emp4"):
        assert run(graph, "fact_history", ns=h.ns, fact_id=ids[key]) == _chain(h)
    assert run(graph, "fact_history", ns=h.ns, fact_id=ids["veg"])[0]["id"] == ids["veg"]
    assert run(graph, "fact_history", ns=h.ns, fact_id="no-such-fact") == []

    expected = [
        {
            "id": row["id"],
            "kind": "fact",
            "text": row["text"],
            "status": row["status"],
            "recorded_at": row["recorded_at"],
            "retired_at": row["retired_at"],
            "replaced_by": row["replaced_by"],
            "how": "superseded" if row["replaced_by"] else None,
            "at": row["replaced_at"],
            "actor": row["actor"],
            "reason": row["reason"],
        }
        for row in _chain(h)
    ]
    assert run(graph, "fact_lineage", ns=h.ns, fact_id=ids["emp2"]) == expected
    hikes = run(graph, "fact_lineage", ns=h.ns, fact_id=ids["hike1"])
    assert hikes == run(graph, "fact_lineage", ns=h.ns, fact_id=ids["hike2"])
    assert hikes == [
        {
            "id": ids["hike1"],
            "kind": "fact",
            "text": TEXTS["hike1"],
            "status": "active",
            "recorded_at": h.at["hike1"],
            "retired_at": None,
            "replaced_by": None,
            "how": None,
            "at": None,
            "actor": None,
            "reason": None,
        },
        {
            "id": ids["hike2"],
            "kind": "fact",
            "text": TEXTS["hike2"],
            "status": "merged",
            "recorded_at": h.at["hike2"],
            "retired_at": h.at["merge"],
            "replaced_by": ids["hike1"],
            "how": "merged",
            "at": h.at["merge"],
            "actor": h.run_id,
            "reason": REASONS["merge"],
        },
    ]
    paris = run(graph, "fact_lineage", ns=h.ns, fact_id=ids["paris"])
    assert [(r["id"], r["how"], r["replaced_by"], r["reason"]) for r in paris] == [
        (ids["london"], "superseded", ids["paris"], REASONS["resolve"]),
        (ids["paris"], None, None, None),
    ]
    # An erased fact is its own lineage: a tombstone without words.
    (phone,) = run(graph, "fact_lineage", ns=h.ns, fact_id=ids["phone"])
    assert (phone["kind"], phone["text"], phone["status"], phone["recorded_at"]) == (
        "forgotten",
        None,
        "active",
        h.at["phone"],
    )
    assert [r["id"] for r in run(graph, "fact_lineage", ns=h.ns, fact_id=ids["veg"])] == [
        ids["veg"]
    ]
    assert run(graph, "fact_lineage", ns=h.ns, fact_id="no-such-fact") == []


def test_superseded_between(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    steps = [
        (h.at["emp2"], "superseded", "emp1", "emp2", "api", REASONS["emp2"]),
        (h.at["emp3"], "superseded", "emp2", "emp3", "api", REASONS["emp3"]),
        (h.at["emp4"], "superseded", "emp3", "emp4", "api", REASONS["emp4"]),
        (h.at["merge"], "merged", "hike2", "hike1", h.run_id, REASONS["merge"]),
        (h.at["resolve"], "superseded", "london", "paris", "api", REASONS["resolve"]),
    ]
    expected = [
        {
            "at": at,
            "how": how,
            "old_id": ids[old],
            "old_text": TEXTS[old],
            "new_id": ids[new],
            "new_text": TEXTS[new],
            "actor": actor,
            "reason": reason,
        }
        for at, how, old, new, actor, reason in steps
    ]
    window = {"since": h.at["emp1"], "until": _after(h)}
    assert run(graph, "superseded_between", ns=h.ns, limit=100, **window) == expected
    part = {"since": h.between("emp3", "emp4"), "until": h.between("merge", "veg")}
    assert run(graph, "superseded_between", ns=h.ns, limit=100, **part) == expected[2:4]
    assert run(graph, "superseded_between", ns=h.ns, limit=1, **window) == expected[:1]
    late = {"since": h.at["resolve"], "until": _after(h)}  # after $since only
    assert run(graph, "superseded_between", ns=h.ns, limit=100, **late) == []


def test_open_contradictions_and_review_flags(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    assert run(graph, "open_contradictions", ns=h.ns, limit=10) == [
        {
            "a_id": ids["fish"],
            "a_text": TEXTS["fish"],
            "b_id": ids["veg"],
            "b_text": TEXTS["veg"],
            "at": h.at["fish"],
            "actor": "api",
            "reason": REASONS["fish"],
        }
    ]
    for include_closed in (False, True):
        (flag,) = run(graph, "review_flags", ns=h.ns, include_closed=include_closed, limit=10)
        at = flag.pop("at")
        assert h.at["call"] < at <= h.at["forget"]  # within the forget call
        assert flag == {
            "flagged_id": ids["call"],
            "flagged_kind": "fact",
            "flagged_text": TEXTS["call"],
            "event": "forgotten",
            "relation": "references",
            "cause_id": ids["phone"],
            "cause_kind": "tombstone",
            "by": None,
            "actor": "api",
            "reason": REASONS["forget"],
            "closed_at": None,
            "closed_by": None,
            "closing": None,
        }


def test_recall_counts(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    names = {v: k for k, v in ids.items()}
    (top,) = run(graph, "most_recalled", ns=h.ns, limit=10)
    last = top.pop("last_accessed_at")
    assert h.at["forget"] < last < datetime.now(UTC)
    assert top == {
        "id": ids["emp4"],
        "text": TEXTS["emp4"],
        "status": "active",
        "access_count": 2,
        "recorded_at": h.at["emp4"],
    }

    def never(before: datetime) -> list[str]:
        return [
            names[r["id"]] for r in run(graph, "never_recalled", ns=h.ns, before=before, limit=100)
        ]

    assert never(h.between("emp4", "hike1")) == []  # emp4 was recalled; the rest retired
    assert never(h.between("hike2", "merge")) == ["hike1"]
    tea_coffee = sorted(["tea", "coffee"], key=lambda k: ids[k])
    assert never(_after(h)) == ["hike1", "veg", "fish", "paris", *tea_coffee, "call"]
    (row,) = run(graph, "never_recalled", ns=h.ns, before=h.between("hike2", "merge"), limit=10)
    assert row == {
        "id": ids["hike1"],
        "text": TEXTS["hike1"],
        "recorded_at": h.at["hike1"],
        "source": None,
        "tags": [],
        "pinned": False,
    }


def test_fact_provenance_back_to_the_messages(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    rows = run(graph, "fact_provenance", ns=h.ns, fact_id=ids["coffee"])
    assert [r["episode_id"] for r in rows] == [h.episodes["m1"], h.episodes["m2"]]
    for row, message in zip(rows, MESSAGES, strict=True):
        stored = row.pop("recorded_at")
        assert h.at["retract"] < stored <= h.at["ingest"]
        assert row == {
            "episode_id": h.episodes[str(message["external_id"])],
            "kind": "episode",
            "external_id": message["external_id"],
            "session_id": message["session_id"],
            "role": "user",
            "speaker": None,
            "occurred_at": datetime.fromisoformat(str(message["occurred_at"])),
            "content": message["content"],
            "derived_at": h.at["ingest"],
            "actor": "extractor",
            "carried_from": None,
        }
    tea = run(graph, "fact_provenance", ns=h.ns, fact_id=ids["tea"])
    assert [(r["external_id"], r["content"]) for r in tea] == [("m1", MESSAGES[0]["content"])]
    for key in ("emp4", "phone"):  # stated directly; erased
        assert run(graph, "fact_provenance", ns=h.ns, fact_id=ids[key]) == []


def test_consolidation_runs_with_their_operations(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    (run_row,) = run(
        graph, "consolidation_runs", ns=h.ns, since=h.at["hike2"], until=_after(h), limit=10
    )
    started, finished = run_row.pop("started_at"), run_row.pop("finished_at")
    assert h.at["hike2"] < started < finished < h.at["veg"]
    assert started < h.at["merge"] < finished
    applied = [json.loads(a) for a in run_row.pop("applied")]
    rejected = [json.loads(r) for r in run_row.pop("rejected")]
    assert [(a["op"], sorted(a["facts"]), a["reason"]) for a in applied] == [
        ("MERGE", sorted([ids["hike1"], ids["hike2"]]), REASONS["merge"])
    ]
    assert [(r["op"], r["numbers"], r["reason"]) for r in rejected] == [
        ("RETRACT", [99], REASONS["rejected"])
    ]
    assert "unknown fact number 99" in rejected[0]["rejection"]
    assert run_row.pop("llm_calls") == 1
    assert run_row.pop("prompt_tokens") > 0 and run_row.pop("completion_tokens") > 0
    assert run_row == {
        "run_id": h.run_id,
        "status": "finished",
        "proposer": "llm",
        "model": "openai-compatible:stub",
        "new_facts": 3,
        "clusters": 1,
        "review": [],
        "error": None,
        "undone_at": None,
        "undone_by": None,
    }
    assert (
        run(graph, "consolidation_runs", ns=h.ns, since=h.at["merge"], until=_after(h), limit=10)
        == []
    )
    assert (
        run(graph, "consolidation_runs", ns=h.ns, since=h.at["emp1"], until=h.at["hike2"], limit=10)
        == []
    )


def test_erasures_between(graph: Graph, history: History) -> None:
    h, ids = history, history.ids
    expected = {
        "at": h.at["forget"],
        "kind": "fact",
        "erased_id": ids["phone"],
        "erasure": h.erasure,
        "actor": "api",
        "reason": REASONS["forget"],
        "status_at_erasure": "active",
        "recorded_at": h.at["phone"],
        "retired_at": None,
        "occurred_at": None,
    }
    for since in (h.at["emp1"], h.between("call", "forget")):
        assert run(graph, "erasures_between", ns=h.ns, since=since, until=_after(h), limit=10) == [
            expected
        ]
    assert (
        run(
            graph,
            "erasures_between",
            ns=h.ns,
            since=h.at["emp1"],
            until=h.between("call", "forget"),
            limit=10,
        )
        == []
    )
    assert (
        run(graph, "erasures_between", ns=h.ns, since=h.at["forget"], until=_after(h), limit=10)
        == []
    )


def _growth(events: list[tuple[datetime, str]], bucket: str) -> list[dict[str, Any]]:
    """namespace_growth's rows computed in Python from (time, what) events."""

    def start(at: datetime) -> date:
        day = at.astimezone(UTC).date()
        if bucket == "week":
            return day - timedelta(days=day.weekday())
        return day.replace(day=1) if bucket == "month" else day

    rows: dict[date, dict[str, Any]] = {}
    for at, what in events:
        row = rows.setdefault(
            start(at),
            {
                "facts_recorded": 0,
                "facts_retired": 0,
                "episodes_recorded": 0,
                "erasures": 0,
                "change": 0,
            },
        )
        row[what] = row.get(what, 0) + 1
        row["change"] += {"facts_recorded": 1, "facts_retired": -1, "believed_erased": -1}.get(
            what, 0
        )
        if what == "believed_erased":
            row["erasures"] += 1
    out, total = [], 0
    for day in sorted(rows):
        row = rows[day]
        total += row.pop("change")
        row.pop("believed_erased", None)
        out.append({"bucket": day, **row, "believed": total})
    return out


def test_namespace_growth(graph: Graph, history: History) -> None:
    h = history
    times = _fact_times(h)
    provenance = run(graph, "fact_provenance", ns=h.ns, fact_id=h.ids["coffee"])
    events = [(rec, "facts_recorded") for rec, _ in times.values()]
    events += [(ret, "facts_retired") for _, ret in times.values() if ret is not None]
    events += [(r["recorded_at"], "episodes_recorded") for r in provenance]
    events += [(h.at["forget"], "believed_erased")]
    for bucket in ("day", "week", "month"):
        rows = run(graph, "namespace_growth", ns=h.ns, bucket=bucket)
        assert rows == _growth(events, bucket), bucket
    months = run(graph, "namespace_growth", ns=h.ns, bucket="month")
    assert sum(m["facts_recorded"] for m in months) == 15
    assert sum(m["facts_retired"] for m in months) == 6
    assert (sum(m["erasures"] for m in months), months[-1]["believed"]) == (1, 8)
    with pytest.raises(InvalidInputError, match="bucket must be day, week or month"):
        run(graph, "namespace_growth", ns=h.ns, bucket="year")


def _params_for(h: History, ns: str) -> dict[str, dict[str, Any]]:
    """Parameters for every library query that, in the history's namespace, find something."""
    window = {"since": h.at["emp1"] - timedelta(seconds=1), "until": _after(h), "limit": 100}
    return {
        "beliefs_about": {"query": "Ada", "limit": 100},
        "beliefs_as_of": {"as_of": _after(h), "limit": 100},
        "true_at": {"valid_at": "2022-01-01T00:00:00Z", "limit": 100},
        "true_at_as_of": {"valid_at": "2022-01-01T00:00:00Z", "as_of": _after(h), "limit": 100},
        "changes_between": window,
        "fact_history": {"fact_id": h.ids["emp2"]},
        "fact_lineage": {"fact_id": h.ids["emp2"]},
        "superseded_between": window,
        "open_contradictions": {"limit": 100},
        "review_flags": {"include_closed": True, "limit": 100},
        "most_recalled": {"limit": 100},
        "never_recalled": {"before": _after(h), "limit": 100},
        "fact_provenance": {"fact_id": h.ids["coffee"]},
        "consolidation_runs": window,
        "erasures_between": window,
        "namespace_growth": {"bucket": "day"},
    }


@pytest.mark.both_versions
def test_every_library_query_is_confined_to_its_namespace(
    graph: Graph, history: History, ns: str
) -> None:
    params = _params_for(history, ns)
    assert set(params) == set(LIBRARY), "a library query without a test of its confinement"
    for name, given in params.items():
        assert run(graph, name, ns=history.ns, **given), f"{name} finds nothing in the history"
        assert run(graph, name, ns=ns, **given) == [], f"{name} left its namespace"


# --- What the history lacks: erased nodes inside a lineage and a provenance -----------------


@pytest.fixture(scope="module")
def erased(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> dict[str, Any]:
    """A namespace where the middle of a SUPERSEDES chain and one of two messages a fact came
    from are forgotten, and the flag that left is confirmed."""
    ns = f"erased-{uuid.uuid4().hex[:12]}"
    with StubLLMServer(stub_answers) as stub:
        memory = make_client(
            "sync", settings=history_settings(test_settings, stub), graph=graph, embedder=embedder
        )
        try:
            red = memory.remember("Ada rides a red bike.", ns=ns)
            blue = memory.remember(
                "Ada rides a blue bike.", supersedes=[red.id], reason="repainted", ns=ns
            )
            green = memory.remember(
                "Ada rides a green bike.", supersedes=[blue.id], reason="repainted again", ns=ns
            )
            first = memory.forget([blue.id], reason="asked to", ns=ns)
            ingested = memory.ingest(MESSAGES, extract=True, ns=ns)
            episodes = {e.external_id: e.id for e in ingested.episodes}
            coffee = next(f for f in ingested.facts if f.text == TEXTS["coffee"])
            second = memory.forget([episodes["m2"]], reason="asked again", ns=ns)
            (flag,) = memory.review(fact_id=coffee.id, ns=ns)
            (closed,) = memory.confirm(coffee.id, reason="still true", ns=ns)
        finally:
            close_client(memory)
    return {
        "ns": ns,
        "red": red,
        "blue": blue,
        "green": green,
        "first": first,
        "second": second,
        "episodes": episodes,
        "coffee": coffee,
        "flag": flag,
        "closed": closed,
    }


def test_lineage_and_supersessions_through_an_erased_fact(
    graph: Graph, erased: dict[str, Any]
) -> None:
    ns, red, blue, green = erased["ns"], erased["red"], erased["blue"], erased["green"]
    # The erasure took the reasons of both steps with the middle fact's words.
    expected = [
        {
            "id": red.id,
            "kind": "fact",
            "text": red.text,
            "status": "superseded",
            "recorded_at": red.recorded_at,
            "retired_at": blue.recorded_at,
            "replaced_by": blue.id,
            "how": "superseded",
            "at": blue.recorded_at,
            "actor": "api",
            "reason": None,
        },
        {
            "id": blue.id,
            "kind": "forgotten",
            "text": None,
            "status": "superseded",
            "recorded_at": blue.recorded_at,
            "retired_at": green.recorded_at,
            "replaced_by": green.id,
            "how": "superseded",
            "at": green.recorded_at,
            "actor": "api",
            "reason": None,
        },
        {
            "id": green.id,
            "kind": "fact",
            "text": green.text,
            "status": "active",
            "recorded_at": green.recorded_at,
            "retired_at": None,
            "replaced_by": None,
            "how": None,
            "at": None,
            "actor": None,
            "reason": None,
        },
    ]
    for fact in (red, blue, green):
        assert run(graph, "fact_lineage", ns=ns, fact_id=fact.id) == expected
    # fact_history lists the facts only: the erased version is left out, and so is the step
    # from it.
    for fact in (red, green):
        rows = run(graph, "fact_history", ns=ns, fact_id=fact.id)
        assert [(r["id"], r["replaced_by"]) for r in rows] == [(red.id, None), (green.id, None)]
    window = {"since": red.recorded_at, "until": erased["first"].at, "limit": 10}
    assert run(graph, "superseded_between", ns=ns, **window) == [
        {
            "at": blue.recorded_at,
            "how": "superseded",
            "old_id": red.id,
            "old_text": red.text,
            "new_id": blue.id,
            "new_text": None,
            "actor": "api",
            "reason": None,
        },
        {
            "at": green.recorded_at,
            "how": "superseded",
            "old_id": blue.id,
            "old_text": None,
            "new_id": green.id,
            "new_text": green.text,
            "actor": "api",
            "reason": None,
        },
    ]
    # Believed while it was believed, without its words.
    middle = blue.recorded_at + (green.recorded_at - blue.recorded_at) / 2
    rows = run(graph, "beliefs_as_of", ns=ns, as_of=middle, limit=10)
    assert [(r["id"], r["status"], r["text"]) for r in rows] == [(blue.id, "forgotten", None)]
    rows = run(
        graph, "changes_between", ns=ns, since=red.recorded_at, until=erased["first"].at, limit=10
    )
    assert [(r["change"], r["id"], r["text"], r["related"]) for r in rows] == [
        ("recorded", blue.id, None, [red.id]),
        ("retired", red.id, red.text, [blue.id]),
        ("recorded", green.id, green.text, [blue.id]),
        ("retired", blue.id, None, [green.id]),
        ("forgotten", blue.id, None, []),
    ]


def test_provenance_flags_and_erasures_after_a_message_is_forgotten(
    graph: Graph, erased: dict[str, Any]
) -> None:
    ns, episodes, coffee = erased["ns"], erased["episodes"], erased["coffee"]
    first, second = erased["first"], erased["second"]
    rows = run(graph, "fact_provenance", ns=ns, fact_id=coffee.id)
    assert [(r["episode_id"], r["kind"], r["external_id"], r["content"]) for r in rows] == [
        (episodes["m1"], "episode", "m1", MESSAGES[0]["content"]),
        (episodes["m2"], "forgotten", None, None),
    ]
    assert rows[1]["occurred_at"] == datetime.fromisoformat(str(MESSAGES[1]["occurred_at"]))
    assert rows[1]["session_id"] is None and rows[1]["actor"] == "extractor"
    # The flag the erasure left on the fact, closed by confirm.
    flag, closed = erased["flag"], erased["closed"]
    assert run(graph, "review_flags", ns=ns, include_closed=False, limit=10) == []
    assert run(graph, "review_flags", ns=ns, include_closed=True, limit=10) == [
        {
            "flagged_id": coffee.id,
            "flagged_kind": "fact",
            "flagged_text": coffee.text,
            "event": "forgotten",
            "relation": "derived_from",
            "cause_id": episodes["m2"],
            "cause_kind": "tombstone",
            "by": None,
            "at": flag.at,
            "actor": "api",
            "reason": "asked again",
            "closed_at": closed.closed_at,
            "closed_by": "api",
            "closing": "confirmed",
        }
    ]
    window = {"since": erased["red"].recorded_at, "until": second.at, "limit": 10}
    rows = run(graph, "erasures_between", ns=ns, **window)
    assert rows == [
        {
            "at": first.at,
            "kind": "fact",
            "erased_id": erased["blue"].id,
            "erasure": first.erasure,
            "actor": "api",
            "reason": "asked to",
            "status_at_erasure": "superseded",
            "recorded_at": erased["blue"].recorded_at,
            "retired_at": erased["green"].recorded_at,
            "occurred_at": None,
        },
        {
            "at": second.at,
            "kind": "episode",
            "erased_id": episodes["m2"],
            "erasure": second.erasure,
            "actor": "api",
            "reason": "asked again",
            "status_at_erasure": None,
            "recorded_at": rows[1]["recorded_at"],
            "retired_at": None,
            "occurred_at": datetime.fromisoformat(str(MESSAGES[1]["occurred_at"])),
        },
    ]
    assert first.at < rows[1]["recorded_at"] < second.at
    # Growth: five facts, two retired, two messages, two erasures; three believed.
    days = run(graph, "namespace_growth", ns=ns, bucket="month")
    totals = [
        sum(d[k] for d in days)
        for k in ("facts_recorded", "facts_retired", "episodes_recorded", "erasures")
    ]
    assert (totals, days[-1]["believed"]) == ([5, 2, 2, 2], 3)
