"""`graphmem init` and `graphmem demo` against the real Neo4j, through the CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.client.graph import Graph
from tests.helpers import cli_env

#: Runs on Neo4j 5.26 too (schema, indexes and migrations).
pytestmark = pytest.mark.both_versions


def test_init_reports_an_up_to_date_schema(graph: Graph) -> None:
    result = CliRunner().invoke(main, ["init", "--json"], env=cli_env(graph))
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert report["version"] == report["latest_version"] == 13
    assert report["applied_now"] == []
    assert report["checksum_mismatches"] == []
    assert report["embedding_dimension"] == 384
    assert {i["state"] for i in report["indexes"]} == {"ONLINE"}
    check = CliRunner().invoke(main, ["init", "--check"], env=cli_env(graph))
    assert check.exit_code == 0, check.output
    assert "schema version  13 of 13" in check.output
    assert "checksums differ" not in check.output


def test_init_shows_a_migration_recorded_with_another_checksum(graph: Graph) -> None:
    from graphmem.store.indexes import MIGRATIONS

    expected = MIGRATIONS[1].checksum
    records, _, _ = graph.driver.execute_query(
        "MATCH (m:GraphmemMigration {version: 2}) SET m.checksum = 'f00d' RETURN count(m) AS n",
        database_=graph.database,
    )
    assert records[0]["n"] == 1
    try:
        result = CliRunner().invoke(main, ["init", "--json"], env=cli_env(graph))
        assert result.exit_code == 0, result.output
        report = json.loads(result.output[result.output.index("{") :])
        assert report["checksum_mismatches"] == [
            {"version": 2, "name": MIGRATIONS[1].name, "recorded": "f00d", "expected": expected}
        ]
        check = CliRunner().invoke(main, ["init", "--check"], env=cli_env(graph))
        assert check.exit_code == 0, check.output
        assert (
            f"checksums differ  migration 2 ({MIGRATIONS[1].name}) was recorded with checksum "
            f"f00d, this graphmem's is {expected}"
        ) in " ".join(check.output.split("\n"))
    finally:
        graph.driver.execute_query(
            "MATCH (m:GraphmemMigration {version: 2}) SET m.checksum = $checksum",
            checksum=expected,
            database_=graph.database,
        )


def test_demo_writes_and_reads_back(graph: Graph) -> None:
    result = CliRunner().invoke(main, ["demo"], env=cli_env(graph))
    assert result.exit_code == 0, result.output
    assert "demo OK" in result.output
    assert "The user now works at Microsoft" in result.output
