"""What a newcomer meets first, through the real commands against the real Neo4j: destructive
commands that ask first, selectors that match nothing, one syntax for times, the output of
ingest --extract, short ids in context taken back everywhere, the CLI's formats and names,
an unreachable LLM, and the demo cleaning up after itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.errors import InvalidInputError, NotFoundError
from graphmem.settings import GraphmemSettings
from graphmem.testing.llm_stub import StubLLMServer
from tests.helpers import cli_env

Invoke = Callable[..., Result]


@pytest.fixture
def cli(graph: Graph, ns: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    env = cli_env(graph, ns)

    def invoke(*args: str, input: str | None = None, **more: str) -> Result:
        return CliRunner().invoke(main, list(args), env={**env, **more}, input=input)

    return invoke


@pytest.fixture
def memory(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str) -> Any:
    with Memory(test_settings, target=graph.target, embedder=embedder, ns=ns) as opened:
        yield opened


def _ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


# --- destructive commands and silent no-ops ---------------------------------------------------
def test_forget_all_needs_its_namespace_named_and_an_answer(
    cli: Invoke, memory: Memory, ns: str
) -> None:
    memory.remember_many(["The user likes tea.", "The user lives in Porto."])
    no_ns = cli("forget", "--all", "--reason", "cleanup", "--yes")
    assert no_ns.exit_code == 2 and "--all erases a whole namespace: name it with --ns" in (
        no_ns.output
    )
    # Where no one can answer (a script), --yes is needed; nothing is erased without it.
    unasked = cli("forget", "--all", "--ns", ns, "--reason", "cleanup")
    assert unasked.exit_code == 2 and "--yes" in unasked.output
    assert memory.stats().facts == 2
    declined = cli("forget", "--all", "--ns", ns, "--reason", "cleanup", "--dry-run")
    assert declined.exit_code == 0 and memory.stats().facts == 2
    done = _ok(cli("forget", "--all", "--ns", ns, "--reason", "cleanup", "--yes", "--json"))
    assert len(json.loads(done.stdout)["facts"]) == 2
    assert memory.stats().facts == 0


def test_forget_asks_before_it_erases(
    cli: Invoke, memory: Memory, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("graphmem.cli.forget._can_ask", lambda: True)
    tea, porto = memory.remember_many(["The user likes tea.", "The user lives in Porto."])
    declined = cli("forget", tea.id, "--reason", "r", input="n\n")
    assert declined.exit_code == 1 and "Erase these 1 item(s)" in declined.stderr
    assert memory.get(tea.id).id == tea.id
    agreed = cli("forget", tea.id, "--reason", "r", input="y\n")
    assert agreed.exit_code == 0 and "Erase these 1 item(s)" in agreed.stderr
    # Nothing left to erase: no question, and the answer says it was forgotten before.
    again = cli("forget", tea.id, "--reason", "r", "--yes", "--json")
    assert again.exit_code == 0 and "Erase" not in again.stderr
    assert json.loads(again.stdout)["already_forgotten"] == [tea.id]
    asked = cli("forget", tea.id, "--reason", "r")
    assert asked.exit_code == 0 and "Erase these" not in asked.stderr
    assert memory.get(porto.id).id == porto.id


def test_a_selector_that_matches_nothing_says_so_with_exit_3(
    cli: Invoke, memory: Memory, ns: str
) -> None:
    memory.ingest([{"content": "Hello there.", "session_id": "chat-1"}])
    typo = cli("forget", "--session", "chat-7", "--reason", "privacy request", "--yes")
    assert typo.exit_code == 3
    assert "Warning: no message is in this session" in typo.stderr
    assert memory.stats().episodes == 1
    # The same for a namespace that holds nothing (a mistyped name).
    empty = cli("stats", "--ns", f"{ns}-typo")
    assert empty.exit_code == 3 and "holds nothing" in empty.stderr
    recalled = cli("recall", "hello", "--ns", f"{ns}-typo", "--json")
    assert recalled.exit_code == 3 and json.loads(recalled.stdout)["hits"] == []
    warned = json.loads(recalled.stderr)["warning"]
    assert warned["type"] == "NothingMatched" and "holds nothing" in warned["message"]
    # A namespace that holds something, and a recall that finds nothing there: exit 0.
    assert cli("recall", "quantum chromodynamics lecture notes").exit_code == 0
    assert cli("stats").exit_code == 0


# --- one syntax for times ---------------------------------------------------------------------
def test_every_time_option_takes_the_same_forms(cli: Invoke, memory: Memory) -> None:
    fact = json.loads(
        _ok(
            cli(
                "remember",
                "The user lives in Porto.",
                "--valid-from",
                "2026-01-01",
                "--valid-to",
                "3 days ago",
                "--json",
            )
        ).stdout
    )
    assert fact["valid_from"].startswith("2026-01-01T00:00:00")
    ended = datetime.fromisoformat(fact["valid_to"].replace("Z", "+00:00"))
    assert abs(ended - (datetime.now(UTC) - timedelta(days=3))) < timedelta(minutes=5)
    for option, value in (("--as-of", "1 hour ago"), ("--valid-at", "2026-02-01")):
        _ok(cli("recall", "where does the user live", option, value))
    naive = cli("recall", "porto", "--as-of", "2026-01-01T09:00:00")
    assert naive.exit_code == 1 and "a time of day without a zone" in naive.output
    # The Python API takes the same texts.
    again = memory.remember("The user moved to Lisbon.", valid_from="yesterday")
    assert again.valid_from is not None and again.valid_from.tzinfo is not None
    assert memory.recall("where does the user live", as_of="now").hits


# --- output --------------------------------------------------------------------------------------
def test_ingest_extract_says_what_it_extracted(cli: Invoke, tmp_path: Path) -> None:
    answer = {
        "reasoning": "one fact",
        "facts": [{"text": "The user adopted a beagle named Biscuit.", "messages": [1]}],
    }
    lines = tmp_path / "chat.jsonl"
    lines.write_text(json.dumps({"content": "I adopted a beagle named Biscuit."}) + "\n")
    with StubLLMServer(lambda _body: answer) as stub:
        env = {"GRAPHMEM_LLM": "openai-compatible:stub", "GRAPHMEM_LLM_BASE_URL": stub.base_url}
        table = _ok(cli("ingest", str(lines), "--extract", **env))
        assert "1 extracted" in table.stdout
        lines.write_text(json.dumps({"content": "My sister lives in Lisbon."}) + "\n")
        data = json.loads(_ok(cli("ingest", str(lines), "--extract", "--json", **env)).stdout)
    assert data["facts"] == 1 and len(data["fact_ids"]) == 1 and data["forgotten_skipped"] == 0


def test_context_shows_short_ids_and_every_command_takes_them(
    cli: Invoke, memory: Memory, graph: Graph, ns: str
) -> None:
    first = memory.remember("The user works at Google.")
    block = memory.context("where does the user work", budget_tokens=300)
    assert f"(fact {first.id[:8]})" in block.text and first.id not in block.text
    assert block.fact_ids == (first.id,)  # the result keeps whole ids
    full = memory.context("where does the user work", budget_tokens=300, short_ids=False)
    assert first.id in full.text
    short = first.id[:8]
    # The Python API and the CLI take the prefix back.
    assert memory.get(short).id == first.id
    second = memory.remember("The user works at Microsoft.", supersedes=[short])
    assert memory.history(second.id[:10]).facts[0].id == first.id
    shown = json.loads(_ok(cli("get", second.id[:8], "--json")).stdout)
    assert shown["id"] == second.id
    # A prefix no id starts is not found; one that several start is refused with them.
    with pytest.raises(NotFoundError, match="starting with"):
        memory.get("abcdef12")
    twin = second.id[:8] + "-0000-4000-8000-000000000000"
    graph.driver.execute_query(  # a copy of the second fact under an id with its prefix
        "MATCH (s:Fact {ns: $ns, id: $id}) CREATE (t:Fact) SET t = s {.*, id: $twin}",
        ns=ns,
        id=second.id,
        twin=twin,
        database_=graph.database,
    )
    with pytest.raises(InvalidInputError, match="starts several ids") as refused:
        memory.get(second.id[:8])
    assert second.id in str(refused.value) and twin in str(refused.value)
    # Where a prefix names two ids, the block shows the whole id.
    assert second.id in memory.context("where does the user work", budget_tokens=300).text


# --- small things --------------------------------------------------------------------------------
def test_the_commands_speak_to_people(cli: Invoke, memory: Memory, ns: str) -> None:
    shown = _ok(cli("remember", "The user keeps bees.")).stdout
    assert "text_hash" not in shown and "keeps bees" in shown
    assert all(len(line) <= 120 for line in _ok(cli("cypher", "list")).stdout.splitlines())
    # --namespace and --ns name the same option everywhere.
    assert _ok(cli("recall", "bees", "--namespace", ns)).stdout.count("keeps bees") == 1
    assert _ok(cli("stats", "--csv")).stdout.startswith("ns,facts,")
    rows = _ok(cli("recall", "bees", "--csv")).stdout.splitlines()
    assert rows[0].startswith("rank,kind,id,score") and "keeps bees" in rows[1]
    both = cli("stats", "--csv", "--json")
    assert both.exit_code == 2 and "two formats" in both.output
    # Refused before the command runs: nothing is erased.
    bees = memory.recall("bees").hits[0].id
    both = cli("forget", bees, "--yes", "--reason", "r", "--json", "--csv")
    assert both.exit_code == 2 and "two formats" in both.output
    assert memory.get(bees).id == bees
    skipped = json.loads(_ok(cli("consolidate", "--json")).stdout)
    if skipped["status"] == "skipped":
        table = _ok(cli("consolidate")).stdout
        assert "force=True" not in table


def test_an_unreachable_llm_is_one_json_error(cli: Invoke, tmp_path: Path) -> None:
    lines = tmp_path / "chat.jsonl"
    lines.write_text(json.dumps({"content": "I moved to Berlin."}) + "\n")
    failed = cli(
        "ingest",
        str(lines),
        "--extract",
        "--json",
        GRAPHMEM_LLM="openai-compatible:stub",
        GRAPHMEM_LLM_BASE_URL="http://127.0.0.1:9/v1",
        GRAPHMEM_LLM_RETRIES="0",
    )
    assert failed.exit_code == 1
    error = json.loads(failed.stderr)["error"]  # stderr is one JSON object
    assert error["type"] == "LLMUnavailableError" and ".." not in error["message"]


def test_the_demo_erases_what_it_wrote_unless_asked_to_keep_it(
    graph: Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**os.environ, **cli_env(graph)}
    done = subprocess.run(
        [sys.executable, "-m", "graphmem", "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "demo OK" in done.stdout and "the demo erased what it wrote" in done.stdout
    namespace = next(
        line.split("'")[1] for line in done.stdout.splitlines() if "in namespace 'demo-" in line
    )
    records, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns}) RETURN count(f) AS facts", ns=namespace, database_=graph.database
    )
    assert records[0]["facts"] == 0


def test_consolidate_and_forget_report_their_progress(memory: Memory) -> None:
    memory.remember_many(["The user likes tea.", "the user likes tea", "The user lives in Porto."])
    steps: list[tuple[int, int]] = []
    result = memory.consolidate(
        force=True, progress=lambda done, total: steps.append((done, total))
    )
    assert steps and steps[-1] == (result.clusters, result.clusters)
    assert [done for done, _ in steps] == list(range(1, result.clusters + 1))
    counted: list[int] = []
    erased = memory.forget(everything=True, reason="cleanup", progress=counted.append)
    assert sum(counted) == len(erased.facts) + len(erased.episodes)
