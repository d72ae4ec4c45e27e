"""`graphmem init` and `graphmem demo` against the real Neo4j, through the CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from graphmem.cli import main
from graphmem.graph import Graph


def _env(graph: Graph) -> dict[str, str]:
    return {
        "GRAPHMEM_NEO4J_URI": graph.target.uri,
        "GRAPHMEM_NEO4J_USER": graph.target.user,
        "GRAPHMEM_NEO4J_PASSWORD": graph.target.password.get_secret_value(),
        "GRAPHMEM_NEO4J_DATABASE": graph.database,
    }


def test_init_reports_an_up_to_date_schema(graph: Graph) -> None:
    result = CliRunner().invoke(main, ["init", "--json"], env=_env(graph))
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert report["version"] == report["latest_version"] == 5
    assert report["applied_now"] == []
    assert report["embedding_dimension"] == 384
    assert {i["state"] for i in report["indexes"]} == {"ONLINE"}
    check = CliRunner().invoke(main, ["init", "--check"], env=_env(graph))
    assert check.exit_code == 0, check.output
    assert "schema version  5 of 5" in check.output


def test_demo_writes_and_reads_back(graph: Graph) -> None:
    result = CliRunner().invoke(main, ["demo"], env=_env(graph))
    assert result.exit_code == 0, result.output
    assert "demo OK" in result.output
    assert "The user now works at Microsoft" in result.output
