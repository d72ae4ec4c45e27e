"""`graphmem cypher run`'s values without a server: `-p` options read by their declared type,
the parameters a query gets (ns and limit filled in), and Neo4j's values as plain data."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path as FilePath
from typing import Any

import neo4j.time
import pytest
from click.testing import CliRunner
from neo4j.graph import Graph as ResultGraph
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import CartesianPoint

from graphmem.cli import main
from graphmem.cli.cypher import first_sentence, header_data, resolve
from graphmem.cli.cypher_values import (
    cell,
    describe_params,
    parse_option,
    parse_options,
    plain,
    plain_rows,
    query_params,
    to_csv,
    to_jsonl,
    typed_value,
    untyped_value,
)
from graphmem.errors import InvalidInputError, QueryNotFoundError
from graphmem.store.cypher import (
    PARAM_TYPES,
    analyst_queries,
    load_query_file,
    parse_cypher,
    used_params,
)

TYPED = parse_cypher(
    "// name: probe\n// mode: read\n"
    "// params: ns: string, as_of: datetime, limit: integer, tags: list<string>, on: boolean\n"
    "// returns: x\n// A probe. It reads.\n"
    "MATCH (f:Fact {ns: $ns}) WHERE f.recorded_at <= $as_of AND $on AND f.tags = $tags "
    "RETURN f.id AS x LIMIT $limit"
)


def test_options_split_at_the_first_equals_sign_and_may_name_a_type() -> None:
    assert parse_option("q=a=b").raw == "a=b"
    option = parse_option("since:datetime=3 days ago")
    assert (option.name, option.kind, option.raw) == ("since", "datetime", "3 days ago")
    assert parse_option("empty=").raw == ""
    for bad, match in [
        ("novalue", "NAME=VALUE"),
        ("1x=2", "not a parameter name"),
        ("x:text=1", "unknown type 'text'"),
    ]:
        with pytest.raises(ValueError, match=match):
            parse_option(bad)
    with pytest.raises(ValueError, match="given twice"):
        parse_options(["a=1", "a=2"])


@pytest.mark.parametrize(
    ("kind", "raw", "expected"),
    [
        ("string", " 42 ", " 42 "),
        ("integer", "42", 42),
        ("integer", "-7", -7),
        ("float", "2.5", 2.5),
        ("float", "3", 3.0),
        ("boolean", "yes", True),
        ("boolean", "FALSE", False),
        ("boolean", "1", True),
        ("boolean", "0", False),
        ("datetime", "2026-03-01", datetime(2026, 3, 1, tzinfo=UTC)),
        ("datetime", "2026-03-01T09:00:00+01:00", datetime(2026, 3, 1, 8, tzinfo=UTC)),
        ("list<string>", '["a", "b,c"]', ["a", "b,c"]),
        ("list<string>", "a, b ,c", ["a", "b", "c"]),
        ("list<string>", "", []),
        ("map", '{"a": [1, 2]}', {"a": [1, 2]}),
    ],
)
def test_typed_values(kind: str, raw: str, expected: Any) -> None:
    value = typed_value("p", kind, raw)
    assert value == expected and type(value) is type(expected)


def test_relative_times_are_utc_datetimes() -> None:
    value = typed_value("as_of", "datetime", "3 days ago")
    assert value.tzinfo is not None and value.utcoffset() == timedelta(0)
    assert abs(datetime.now(UTC) - timedelta(days=3) - value) < timedelta(minutes=1)
    assert abs(datetime.now(UTC) - typed_value("as_of", "datetime", "now")) < timedelta(minutes=1)


@pytest.mark.parametrize(
    ("kind", "raw"),
    [
        ("integer", "4.5"),
        ("integer", "ten"),
        ("integer", str(2**63)),
        ("float", "abc"),
        ("float", "nan"),
        ("float", "inf"),
        ("boolean", "maybe"),
        ("datetime", "2026-03-01T09:00:00"),
        ("datetime", "last tuesday"),
        ("datetime", "2026-02-30"),
        ("list<string>", "[1, 2]"),
        ("list<string>", "[oops"),
        ("map", "[1]"),
        ("map", '{"a": 1, "a": 2}'),
        ("map", "nope"),
    ],
)
def test_a_bad_value_names_the_parameter_and_its_type(kind: str, raw: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        typed_value("p", kind, raw)
    assert f"parameter 'p' must be {kind} ({PARAM_TYPES[kind]})" in str(error.value)


def test_untyped_values_are_json_when_they_parse_and_text_otherwise() -> None:
    assert untyped_value("5") == 5 and untyped_value("5.5") == 5.5
    assert untyped_value("true") is True and untyped_value("null") is None
    assert untyped_value('["a", 1]') == ["a", 1] and untyped_value('{"k": "v"}') == {"k": "v"}
    assert untyped_value('"42"') == "42"
    assert untyped_value("hello world") == "hello world"
    assert untyped_value("2026-01-01T00:00:00Z") == "2026-01-01T00:00:00Z"
    assert untyped_value("NaN") == "NaN" and untyped_value("") == ""
    with pytest.raises(InvalidInputError, match="given twice"):
        untyped_value('{"a": 1, "a": 2}')


def test_a_library_query_gets_its_typed_params_ns_and_limit() -> None:
    options = parse_options(["as_of=2026-01-01", "tags=a,b", "on=no"])
    params = query_params(TYPED, TYPED.text, options, ns="user-1", limit=10)
    assert params == {
        "as_of": datetime(2026, 1, 1, tzinfo=UTC),
        "tags": ["a", "b"],
        "on": False,
        "ns": "user-1",
        "limit": 11,  # one more than the row limit: a cut can be seen
    }
    given = parse_options(["as_of=now", "tags=[]", "on=1", "ns=other", "limit=3"])
    params = query_params(TYPED, TYPED.text, given, ns="user-1", limit=10)
    assert params["ns"] == "other" and params["limit"] == 3


def test_missing_unknown_and_mistyped_params_are_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"needs parameter\(s\) as_of, tags, on"):
        query_params(TYPED, TYPED.text, {}, ns="n", limit=5)
    with pytest.raises(InvalidInputError, match="has no parameter asof"):
        query_params(TYPED, TYPED.text, parse_options(["asof=now"]), ns="n", limit=5)
    with pytest.raises(InvalidInputError, match="is a datetime, not a string"):
        query_params(TYPED, TYPED.text, parse_options(["as_of:string=x"]), ns="n", limit=5)
    opts = parse_options(["as_of=now", "tags=a", "on=perhaps"])
    with pytest.raises(InvalidInputError, match="parameter 'on' must be boolean"):
        query_params(TYPED, TYPED.text, opts, ns="n", limit=5)


def test_an_ad_hoc_query_has_the_params_its_text_uses() -> None:
    text = "MATCH (f:Fact {ns: $ns}) // not $this\nWHERE f.text = '$nor_this' AND f.x > $n RETURN f"
    assert used_params(text) == ("ns", "n")
    # an apostrophe in a comment opens no string; quoted and numbered parameters count
    odd = "MATCH (f {ns: $ns}) // the user's\nWHERE f.s = $src AND f.t <> 'x' RETURN $`a b`, $0"
    assert used_params(odd) == ("ns", "src", "a b", "0")
    assert used_params("RETURN '$a' + \"$b\" /* $c */ + `$d`") == ()
    params = query_params(None, text, parse_options(["n=5"]), ns="mine", limit=9)
    assert params == {"n": 5, "ns": "mine"}
    forced = query_params(None, text, parse_options(["n:string=5"]), ns="mine", limit=9)
    assert forced["n"] == "5"
    dated = query_params(None, text, parse_options(["n:datetime=2026-01-02"]), ns="m", limit=9)
    assert dated == {"n": datetime(2026, 1, 2, tzinfo=UTC), "ns": "m"}
    with pytest.raises(InvalidInputError, match="has no parameter m"):
        query_params(None, text, parse_options(["n=1", "m=2"]), ns="mine", limit=9)
    with pytest.raises(InvalidInputError, match="needs parameter"):
        query_params(None, text, {}, ns="mine", limit=9)
    assert query_params(None, "RETURN 1", {}, ns="mine", limit=9) == {}


def test_the_library_headers_are_typed_and_listed() -> None:
    queries = analyst_queries()
    beliefs = queries["beliefs_as_of"]
    assert describe_params(beliefs) == "ns: string, as_of: datetime, limit: integer"
    data = header_data(beliefs)
    assert data["params"][1] == {"name": "as_of", "type": "datetime"}
    assert data["returns"][:2] == ["id", "text"] and data["mode"] == "read"
    result = CliRunner().invoke(main, ["cypher", "list"])
    assert result.exit_code == 0, result.output
    for query in queries.values():  # one short line each: the names of its parameters
        names = ", ".join(p for p in query.param_types if p != "ns") or "-"
        assert f"{query.name} " in result.output and names in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 120
    listed = json.loads(CliRunner().invoke(main, ["cypher", "list", "--json"]).stdout)
    assert sorted(q["name"] for q in listed) == sorted(queries)
    assert first_sentence("Open ones (invariant 2). status is now.") == "Open ones (invariant 2)."
    assert first_sentence("What it was, by then. More.") == "What it was, by then."


def test_a_target_is_a_library_name_or_a_file(tmp_path: FilePath) -> None:
    assert resolve("beliefs_as_of").name == "beliefs_as_of"
    with pytest.raises(QueryNotFoundError, match="no query named 'beliefs'"):
        resolve("beliefs")
    path = tmp_path / "mine.cypher"
    path.write_text(
        "// name: mine\n// mode: read\n// params: ns: string, as_of: datetime\n"
        "WITH [$as_of] AS given\n{{zoned_times}}\n"
        "MATCH (f:Fact {ns: $ns}) WHERE f.recorded_at <= times[0] RETURN f.id AS id\n",
        encoding="utf-8",
    )
    query = resolve(str(path))
    assert query.param_types == {"ns": "string", "as_of": "datetime"}
    assert "{{" not in query.text and query == load_query_file(path)
    with pytest.raises(InvalidInputError, match="cannot read it"):
        resolve(str(tmp_path / "absent.cypher"))
    (tmp_path / "other.cypher").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(InvalidInputError, match="differs from the file name"):
        resolve(str(tmp_path / "other.cypher"))
    shown = CliRunner().invoke(main, ["cypher", "show", str(path)])
    assert shown.exit_code == 0 and shown.output.startswith("// name: mine\n")
    assert shown.output.rstrip().endswith("RETURN f.id AS id;") and "{{" not in shown.output


def test_the_command_line_refuses_bad_input_before_connecting() -> None:
    # No server is configured here: each of these fails before one would be needed.
    runner = CliRunner()
    cases = [
        (["cypher", "run"], 2, "give a TARGET"),
        (["cypher", "run", "beliefs_as_of", "-q", "RETURN 1"], 2, "not both"),
        (["cypher", "run", "beliefs_as_of", "-p", "as_of"], 2, "NAME=VALUE"),
        (["cypher", "run", "beliefs_as_of", "--csv", "--jsonl"], 2, "cannot go together"),
        (["cypher", "run", "nothing_like_it"], 1, "no query named"),
        (["cypher", "run", "beliefs_as_of"], 1, "needs parameter(s) as_of"),
        (["cypher", "run", "beliefs_as_of", "-p", "as_of=soon"], 1, "must be datetime"),
        (["cypher", "run", "beliefs_as_of", "-p", "asof=now"], 1, "has no parameter asof"),
        (["cypher", "run", "-q", "  "], 1, "the query is empty"),
        (["cypher", "run", "-q", "RETURN $x"], 1, "needs parameter(s) x"),
    ]
    for args, code, message in cases:
        result = runner.invoke(main, args)
        assert result.exit_code == code, (args, result.output)
        assert message in result.output, (args, result.output)
    failed = runner.invoke(main, ["cypher", "run", "beliefs_as_of", "-p", "as_of=x", "--json"])
    error = json.loads(failed.stderr)["error"]
    assert error["type"] == "InvalidInputError" and "'as_of'" in error["message"]


def _graph_values() -> tuple[Node, Relationship, Path]:
    graph = ResultGraph()
    first = Node(graph, "e:1", 1, {"Fact"}, {"id": "f1", "text": "hi", "embedding": [0.1, 0.2]})
    second = Node(graph, "e:2", 2, {"Fact", "Pinned"}, {"id": "f2"})
    edge = graph.relationship_type("SUPERSEDES")(
        graph, "r:7", 7, {"reason": "newer", "at": neo4j.time.Date(2026, 1, 2)}
    )
    edge._start_node, edge._end_node = first, second
    return first, edge, Path(first, edge)


def test_neo4j_values_become_plain_data() -> None:
    node, rel, path = _graph_values()
    assert plain(node) == {"labels": ["Fact"], "properties": {"id": "f1", "text": "hi"}}
    assert plain(rel) == {
        "type": "SUPERSEDES",
        "start": "f1",
        "end": "f2",
        "properties": {"at": "2026-01-02", "reason": "newer"},
    }
    walked = plain(path)
    assert [n["properties"]["id"] for n in walked["nodes"]] == ["f1", "f2"]
    assert walked["relationships"][0]["type"] == "SUPERSEDES"
    stamp = neo4j.time.DateTime(2026, 3, 1, 9, 30, 0, tzinfo=UTC)
    assert plain(stamp) == "2026-03-01T09:30:00.000000000+00:00"
    assert plain(datetime(2026, 3, 1, tzinfo=UTC)) == "2026-03-01T00:00:00+00:00"
    assert plain(neo4j.time.Duration(days=2, hours=3)) == "P2DT3H"
    assert plain(CartesianPoint((1.0, 2.0))) == {"srid": 7203, "coordinates": [1.0, 2.0]}
    assert plain(b"\x00\x01") == "AAE="
    assert plain(float("nan")) == "nan"
    assert plain({"k": [stamp, None]}) == {"k": ["2026-03-01T09:30:00.000000000+00:00", None]}


def test_rows_as_cells_csv_and_json_lines() -> None:
    rows = plain_rows(["a", "b", "c"], [[1, ["x", "y"], None], [True, {"k": "é"}, "t,u"]])
    assert rows == [
        {"a": 1, "b": ["x", "y"], "c": None},
        {"a": True, "b": {"k": "é"}, "c": "t,u"},
    ]
    assert [cell(v) for v in rows[1].values()] == ["true", '{"k":"é"}', "t,u"]
    assert cell(None) == "" and cell(2.5) == "2.5"
    assert (
        to_csv(["a", "b", "c"], rows)
        == 'a,b,c\r\n1,"[""x"",""y""]",\r\ntrue,"{""k"":""é""}","t,u"\r\n'
    )
    lines = to_jsonl(rows).splitlines()
    assert [json.loads(line) for line in lines] == rows
