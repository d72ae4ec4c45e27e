"""`graphmem audit` against the scripted history (tests/history.py), through the CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from tests.helpers import cli_env
from tests.history import REASONS, TEXTS, History


@pytest.fixture
def cli(graph: Graph, history: History, embedder: Embedder, monkeypatch: Any) -> Any:
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    env = cli_env(graph, history.ns)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, ["audit", *args], env=env)

    return invoke


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_audit_commands(cli: Any, history: History) -> None:
    ids = history.ids
    then = history.between("emp2", "emp3").isoformat()
    beliefs = _json(cli("beliefs", "--as-of", then, "--json"))
    assert [f["id"] for f in beliefs["facts"]] == [ids["emp2"]]
    table = cli("beliefs", "--as-of", then)
    assert table.exit_code == 0 and TEXTS["emp2"] in table.output
    truths = _json(cli("truths", "2022-01-01", "--as-of", then, "--json"))
    assert [f["id"] for f in truths["facts"]] == [ids["emp2"]]
    diff = _json(
        cli("diff", history.at["emp4"].isoformat(), history.at["forget"].isoformat(), "--json")
    )
    assert [c["change"] for c in diff["retired"]] == ["merged", "superseded", "retracted"]
    assert [f["id"] for f in diff["forgotten"]] == [ids["phone"]]
    shown = cli("diff", history.at["emp4"].isoformat(), history.at["forget"].isoformat())
    assert shown.exit_code == 0 and "[forgotten]" in shown.output
    assert TEXTS["phone"] not in shown.output
    line = _json(cli("timeline", ids["emp3"], "--json"))
    assert [e["kind"] for e in line["events"]].count("superseded") == 3
    assert line["head_id"] == ids["emp4"]
    told = cli("timeline", ids["hike2"])
    assert told.exit_code == 0 and history.run_id in told.output
    explained = cli("explain", ids["cat"])
    assert explained.exit_code == 0 and REASONS["retract"] in explained.output
    open_ones = _json(cli("contradictions", "--json"))
    assert [(c["a"], c["b"]) for c in open_ones] == [(ids["fish"], ids["veg"])]
    every = cli("contradictions", "--all")
    assert every.exit_code == 0 and ids["paris"] in every.output


def test_audit_refuses_bad_times(cli: Any, history: History) -> None:
    naive = cli("beliefs", "--as-of", "2026-03-01T09:00:00")
    assert naive.exit_code == 1 and "naive datetime" in naive.output
    backwards = cli("diff", "now", "2020-01-01", "--json")
    assert backwards.exit_code == 1
    assert json.loads(backwards.stderr)["error"]["type"] == "InvalidInputError"
    unknown = cli("timeline", "no-such-fact")
    assert unknown.exit_code == 1 and "no fact" in unknown.output
