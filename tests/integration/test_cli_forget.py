"""`graphmem forget` (with --dry-run and --verify), `graphmem review` and `--allow-forgotten`
against the real Neo4j, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from tests.helpers import cli_env


@pytest.fixture
def cli(graph: Graph, ns: str, embedder: Embedder, monkeypatch: Any) -> Any:
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    env = cli_env(graph, ns)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env)

    return invoke


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_forget_review_and_verify_from_the_command_line(cli: Any, tmp_path: Path) -> None:
    fact = _json(cli("remember", "The user's passport number is X1234567.", "--json"))
    note = _json(cli("remember", "Passport kept in the safe", "--references", fact["id"], "--json"))
    dry = _json(cli("forget", fact["id"], "--reason", "request 42", "--dry-run", "--json"))
    assert dry["dry_run"] and dry["facts"] == [fact["id"]]
    assert _json(cli("get", fact["id"], "--json"))["text"].startswith("The user's passport")
    table = cli("forget", fact["id"], "--reason", "request 42", "--yes")
    assert table.exit_code == 0 and "flagged for review" in table.output
    assert note["id"] in table.output
    refused = cli("get", fact["id"])
    assert refused.exit_code == 1 and "forgotten" in refused.output
    verified = cli("forget", "--verify", fact["id"], "--text", "passport number is X1234567")
    assert verified.exit_code == 0 and "clean" in verified.output, verified.output
    # Review: listed, then confirmed.
    flags = _json(cli("review", "--json"))
    assert [(f["flagged_id"], f["event"]) for f in flags] == [(note["id"], "forgotten")]
    assert note["id"] in cli("review").output
    closed = _json(cli("review", "confirm", note["id"], "--reason", "still true", "--json"))
    assert closed[0]["closing"] == "confirmed"
    assert _json(cli("review", "--json")) == []
    assert len(_json(cli("review", "--all", "--json"))) == 1
    # The same text again: refused, or stored flagged.
    again = cli("remember", "the user's passport number is x1234567")
    assert again.exit_code == 1 and "allow" in again.output
    back = _json(
        cli("remember", "The user's passport number is X1234567.", "--allow-forgotten", "--json")
    )
    assert back["previously_forgotten"] is True
    lines = tmp_path / "chat.jsonl"
    lines.write_text(
        json.dumps({"content": "hello"})
        + "\n"
        + json.dumps({"content": "The user's passport number is X1234567."})
        + "\n",
        encoding="utf-8",
    )
    ingested = cli("ingest", str(lines))
    assert ingested.exit_code == 1 and "line 2" in ingested.output, ingested.output
    # Verification that finds the words again exits 1 and names where.
    found = cli("forget", "--verify", fact["id"], "--json")
    assert found.exit_code == 1
    report = json.loads(found.stdout)
    assert any(back["id"] in f["where"] for f in report["findings"])


def test_forget_needs_one_target_and_a_reason(cli: Any, ns: str) -> None:
    fact = _json(cli("remember", "Kept", "--json"))
    assert cli("forget", fact["id"]).exit_code == 1  # no --reason
    assert cli("forget", "--reason", "r").exit_code == 1  # nothing named
    assert cli("forget", fact["id"], "--source", "s", "--reason", "r").exit_code == 1
    assert cli("forget", "--verify", fact["id"], "--all").exit_code == 2
    assert _json(cli("get", fact["id"], "--json"))["text"] == "Kept"
    done = _json(cli("forget", "--all", "--ns", ns, "--reason", "tenant left", "--yes", "--json"))
    assert done["facts"] == [fact["id"]]
