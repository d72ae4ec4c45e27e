"""The memory commands (`remember`, `ingest`, `recall`, `context`, `get`, `history`, `stats`,
`pin`) against the real Neo4j, through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from tests.helpers import cli_env

Invoke = Callable[..., Result]


@pytest.fixture
def cli(
    graph: Graph,
    ns: str,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> Invoke:
    """Runs `graphmem ...` against the test server with this test's namespace as default.

    The commands share the session's embedder (the same model the CLI would load).
    """
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    env = cli_env(graph, ns)

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(main, list(args), env=env, input=input)

    return invoke


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _stats(cli: Invoke, *args: str) -> dict[str, Any]:
    """The counts; an empty namespace exits 3 (it holds nothing), with the same JSON."""
    result = cli("stats", "--json", *args)
    assert result.exit_code in (0, 3), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert (result.exit_code == 3) == (
        data["facts"] + data["episodes"]
        == 0
        == data["forgotten_facts"] + data["forgotten_episodes"]
    )
    return data


def _write_jsonl(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


MESSAGES: list[dict[str, Any] | str] = [
    {"content": "I adopted a beagle named Biscuit.", "external_id": "m1", "session_id": "s1"},
    {
        "content": "Biscuit loves long walks by the river.",
        "role": "assistant",
        "occurred_at": "2026-03-01T09:00:00+00:00",
        "external_id": "m2",
        "session_id": "s1",
    },
    {"content": "My sister lives in Lisbon.", "speaker": "Ana", "metadata": {"channel": "sms"}},
]


def test_remember_then_recall_finds_it(cli: Invoke, ns: str) -> None:
    fact = _json(
        cli(
            "remember",
            "The user works at Microsoft as a data engineer.",
            "--tag",
            "work",
            "--source",
            "chat",
            "--metadata",
            '{"confidence": 0.9}',
            "--json",
        )
    )
    assert fact["status"] == "active" and fact["ns"] == ns
    assert fact["tags"] == ["work"] and fact["source"] == "chat"
    assert fact["metadata"] == {"confidence": 0.9}
    assert fact["recorded_at"]

    result = _json(cli("recall", "where does the user work?", "--json"))
    assert result["ns"] == ns
    assert result["hits"][0]["id"] == fact["id"]
    assert result["hits"][0]["kind"] == "fact"
    assert {"vector", "fulltext", "final"} <= set(result["hits"][0]["scores"])
    assert result["timing"]["total_ms"] > 0

    table = cli("recall", "where does the user work?", "--fusion", "linear", "--tag", "work")
    assert table.exit_code == 0, table.output
    assert "RANK" in table.stdout and "FULLTEXT" in table.stdout
    assert fact["id"] in table.stdout and "Microsoft" in table.stdout
    assert "ms (embed" in table.stdout

    episodes_only = _json(cli("recall", "where does the user work?", "--kind", "episode", "--json"))
    assert episodes_only["hits"] == []

    shown = cli("remember", "The user drinks green tea.")
    assert shown.exit_code == 0, shown.output
    assert "status" in shown.stdout and "active" in shown.stdout and "recorded_at" in shown.stdout


def test_supersedes_builds_a_chain_and_recall_hides_the_old_fact(cli: Invoke) -> None:
    old = _json(cli("remember", "The user lives in Paris.", "--json"))
    new = _json(
        cli(
            "remember",
            "The user lives in Berlin.",
            "--supersedes",
            old["id"],
            "--reason",
            "moved in March",
            "--json",
        )
    )

    chain = _json(cli("history", old["id"], "--json"))
    assert chain["head_id"] == new["id"]
    assert [f["id"] for f in chain["facts"]] == [old["id"], new["id"]]
    assert [f["status"] for f in chain["facts"]] == ["superseded", "active"]
    (edge,) = chain["edges"]
    assert edge["newer_id"] == new["id"] and edge["older_id"] == old["id"]
    assert edge["reason"] == "moved in March" and edge["actor"] == "api"
    assert [f["recorded_by"] for f in chain["facts"]] == ["api", "api"]  # who created each

    table = cli("history", new["id"])
    assert table.exit_code == 0, table.output
    assert "RECORDED_AT" in table.stdout and "RECORDED_BY" in table.stdout
    assert "superseded" in table.stdout and "moved in March" in table.stdout
    head_line = next(line for line in table.stdout.splitlines() if line.startswith("*"))
    assert new["id"] in head_line
    # Times as `get` and --json write them.
    assert new["recorded_at"].endswith("Z") and new["recorded_at"] in head_line
    old_line = next(line for line in table.stdout.splitlines() if old["id"] in line)
    assert chain["facts"][0]["retired_at"] in old_line and "+00:00" not in table.stdout
    assert chain["edges"][0]["at"] in table.stdout

    believed = _json(cli("recall", "which city does the user live in?", "--json"))
    ids = [hit["id"] for hit in believed["hits"]]
    assert new["id"] in ids and old["id"] not in ids

    everything = _json(
        cli("recall", "which city does the user live in?", "--include-retired", "--json")
    )
    assert {new["id"], old["id"]} <= {hit["id"] for hit in everything["hits"]}
    shown = cli("recall", "which city does the user live in?", "--include-retired").stdout
    assert "STATUS" in shown
    assert "superseded" in next(line for line in shown.splitlines() if old["id"] in line)
    assert "STATUS" not in cli("recall", "which city does the user live in?").stdout

    again = cli("remember", "The user lives in Rome.", "--supersedes", old["id"])
    assert again.exit_code == 1
    assert "Error:" in again.stderr and "superseded" in again.stderr


def test_ingest_creates_episodes_and_a_rerun_reports_duplicates(
    cli: Invoke, ns: str, tmp_path: Path
) -> None:
    path = _write_jsonl(tmp_path / "chat.jsonl", MESSAGES)
    first = _json(cli("ingest", str(path), "--json"))
    assert first["ns"] == ns
    assert first["created"] == 3 and first["duplicates"] == 0 and first["skipped"] == 0
    assert len(first["episode_ids"]) == 3

    second = _json(cli("ingest", str(path), "--json", "--batch-size", "2"))
    assert second["created"] == 0 and second["duplicates"] == 3
    assert sorted(second["duplicate_ids"]) == sorted(first["episode_ids"])

    people = cli("ingest", str(path))
    assert people.exit_code == 0, people.output
    assert "created" in people.stdout and "duplicates  3" in people.stdout

    stats = _stats(cli)
    assert stats["episodes"] == 3 and stats["sessions"] == 1

    episode = _json(cli("get", first["episode_ids"][1], "--json"))
    assert episode["kind"] == "episode"
    assert episode["content"] == "Biscuit loves long walks by the river."
    assert episode["role"] == "assistant" and episode["external_id"] == "m2"

    hits = _json(cli("recall", "what is the dog called?", "--kind", "episode", "--json"))
    assert hits["hits"] and hits["hits"][0]["kind"] == "episode"


def test_ingest_in_small_batches_with_a_session_id(cli: Invoke, tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [{"content": f"Message number {i}."} for i in range(7)]
    path = _write_jsonl(tmp_path / "many.jsonl", rows)
    result = _json(cli("ingest", str(path), "--batch-size", "3", "--session-id", "s-9", "--json"))
    assert result["created"] == 7 and result["messages"] == 7
    stats = _stats(cli)
    assert stats["episodes"] == 7 and stats["sessions"] == 1
    episode = _json(cli("get", result["episode_ids"][6], "--json"))
    assert episode["session_id"] == "s-9" and episode["content"] == "Message number 6."


def test_a_malformed_line_writes_nothing_unless_skip_bad(cli: Invoke, tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        {"content": "The first message is fine."},
        '{"content": "broken',
        {"content": "The third message is fine too."},
    ]
    path = _write_jsonl(tmp_path / "bad.jsonl", rows)

    refused = cli("ingest", str(path))
    assert refused.exit_code == 1
    assert refused.stdout == ""
    assert "Error:" in refused.stderr and "line 2" in refused.stderr
    as_json = cli("ingest", str(path), "--json")
    assert as_json.exit_code == 1 and as_json.stdout == ""
    assert [p["line"] for p in json.loads(as_json.stderr)["error"]["bad_lines"]] == [2]
    assert _stats(cli)["episodes"] == 0

    skipped = cli("ingest", str(path), "--skip-bad", "--json")
    data = _json(skipped)
    assert data["created"] == 2 and data["skipped"] == 1
    assert data["bad_lines"][0]["line"] == 2
    assert "line 2" in skipped.stderr
    assert _stats(cli)["episodes"] == 2
    # No good line: a failure even with --skip-bad, whether the lines are malformed or
    # conflict with stored messages.
    all_bad = _write_jsonl(tmp_path / "all-bad.jsonl", ['{"content": "broken', {"content": ""}])
    failed = cli("ingest", str(all_bad), "--skip-bad")
    assert failed.exit_code == 1 and failed.stdout == ""
    assert "no line could be written, all 2 are bad" in failed.stderr
    assert "line 1" in failed.stderr and "line 2" in failed.stderr
    cli("ingest", input=json.dumps({"content": "kept", "external_id": "k"}) + "\n")
    edit = {"content": "an edit", "external_id": "k"}
    clash = _write_jsonl(tmp_path / "clash.jsonl", ['{"content": "broken', edit])
    failed = cli("ingest", str(clash), "--skip-bad", "--json")
    assert failed.exit_code == 1 and failed.stdout == ""
    assert "skipped line 2: external id 'k'" in failed.stderr  # reported as it is skipped
    bad = json.loads(failed.stderr[failed.stderr.index("\n{") + 1 :])  # then the error
    assert [b["line"] for b in bad["error"]["bad_lines"]] == [1, 2]
    assert _stats(cli)["episodes"] == 3


def test_a_file_is_one_call_whatever_the_batch_size(cli: Invoke, tmp_path: Path) -> None:
    # Each "yes" answers its own question: all are stored, although they fall in other writes.
    rows: list[dict[str, Any] | str] = []
    for question in ("Tea?", "Milk?", "Sugar?"):
        rows += [{"content": question, "role": "assistant"}, {"content": "yes"}]
    path = _write_jsonl(tmp_path / "yes.jsonl", rows)
    first = _json(cli("ingest", str(path), "--batch-size", "2", "--session-id", "s", "--json"))
    assert first["created"] == 6 and first["duplicates"] == 0
    again = _json(cli("ingest", str(path), "--batch-size", "1", "--session-id", "s", "--json"))
    assert again["created"] == 0 and again["duplicate_ids"] == first["episode_ids"]


def test_a_reused_external_id_names_both_lines(cli: Invoke, tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        {"content": "line one", "external_id": "e1"},
        {"content": ""},
        {"content": "line three", "external_id": "e3"},
        {"content": "line four", "external_id": "e1"},
        {"content": "line five"},
    ]
    path = _write_jsonl(tmp_path / "clash.jsonl", rows)
    refused = cli("ingest", str(path), "--batch-size", "1")
    assert refused.exit_code == 1 and "line 2" in refused.stderr
    fixed = _write_jsonl(tmp_path / "clash2.jsonl", [r for i, r in enumerate(rows) if i != 1])
    refused = cli("ingest", str(fixed), "--batch-size", "1")
    assert refused.exit_code == 1, refused.output
    assert "line 3: external id 'e1'" in refused.stderr and "already line 1's" in refused.stderr
    assert _stats(cli)["episodes"] == 0

    skipped = cli("ingest", str(path), "--batch-size", "1", "--skip-bad", "--json")
    data = _json(skipped)
    assert data["created"] == 3 and data["skipped"] == 2
    assert [b["line"] for b in data["bad_lines"]] == [2, 4]
    assert "skipped line 4: external id 'e1'" in skipped.stderr
    # A line that clashes with a stored message names the stored episode.
    stored = _write_jsonl(tmp_path / "later.jsonl", [{"content": "other", "external_id": "e3"}])
    refused = cli("ingest", str(stored))
    assert refused.exit_code == 1 and "line 1: external id 'e3'" in refused.stderr
    assert "already stored episode" in refused.stderr
    assert _stats(cli)["episodes"] == 3


def test_every_conflicting_line_is_found_in_one_pass(
    cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("ingest", input=json.dumps({"content": "stored", "external_id": "s"}) + "\n")
    rows: list[dict[str, Any] | str] = [
        {"content": "one", "external_id": "e1"},
        {"content": "stored, edited", "external_id": "s"},
        {"content": "one, edited", "external_id": "e1"},
        {"content": "four"},
        {"content": "one, edited again", "external_id": "e1"},
    ]
    path = _write_jsonl(tmp_path / "clashes.jsonl", rows)
    calls: list[int] = []
    ingest = Memory.ingest

    def counted(self: Memory, messages: Any, **options: Any) -> Any:
        calls.append(len(messages))
        return ingest(self, messages, **options)

    monkeypatch.setattr(Memory, "ingest", counted)
    refused = cli("ingest", str(path))
    assert refused.exit_code == 1 and refused.stdout == ""
    assert "line 2: external id 's'" in refused.stderr
    assert "(and 2 more: lines 3, 5)" in refused.stderr
    assert _stats(cli)["episodes"] == 1
    calls.clear()
    skipped = cli("ingest", str(path), "--skip-bad", "--json")
    data = _json(skipped)
    assert data["created"] == 2 and [b["line"] for b in data["bad_lines"]] == [2, 3, 5]
    # One call finds the three conflicts, a second writes the rest.
    assert calls == [5, 2]
    assert _stats(cli)["episodes"] == 3


def test_metadata_nested_too_deeply_is_a_bad_line(cli: Invoke, tmp_path: Path) -> None:
    deep = '{"content": "deep", "metadata": ' + '{"a": ' * 3000 + "1" + "}" * 3001
    too_deep = {"content": "too deep", "metadata": json.loads('{"a": ' * 40 + "1" + "}" * 40)}
    path = _write_jsonl(tmp_path / "deep.jsonl", [deep, too_deep, {"content": "flat"}])
    refused = cli("ingest", str(path))
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert "line 1: invalid JSON: nested too deeply" in refused.stderr
    assert "line 2:" in refused.stderr and "nested more than 32" in refused.stderr
    data = _json(cli("ingest", str(path), "--skip-bad", "--json"))
    assert data["created"] == 1 and [b["line"] for b in data["bad_lines"]] == [1, 2]
    flag = cli("remember", "deep metadata", "--metadata", '{"a": ' * 3000 + "1" + "}" * 3000)
    assert flag.exit_code == 2 and "nested too deeply" in flag.stderr


def test_a_naive_datetime_in_a_line_is_refused(cli: Invoke, tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        {"content": "fine"},
        {"content": "when?", "occurred_at": "2026-03-01T09:00:00"},
    ]
    result = cli("ingest", str(_write_jsonl(tmp_path / "naive.jsonl", rows)))
    assert result.exit_code == 1
    assert "line 2" in result.stderr and "naive datetime" in result.stderr
    assert _stats(cli)["episodes"] == 0


def test_ingest_reads_stdin(cli: Invoke) -> None:
    text = '{"content": "From standard input."}\n\n{"content": "Second line from stdin."}\n'
    result = _json(cli("ingest", "--json", input=text))
    assert result["created"] == 2
    dash = _json(cli("ingest", "-", "--json", input=text))
    assert dash["created"] == 0 and dash["duplicates"] == 2
    assert _stats(cli)["episodes"] == 2


def test_context_respects_the_budget(cli: Invoke) -> None:
    texts = [
        "The user's favourite colour is green.",
        "The user plays the cello in an amateur orchestra.",
        "The user is allergic to peanuts.",
        "The user prefers answers in British English.",
    ]
    for text in texts:
        assert cli("remember", text).exit_code == 0
    pinned = _json(cli("remember", "The user's name is Dana.", "--pinned", "--json"))

    big = _json(cli("context", "what do I know about the user?", "--budget", "500", "--json"))
    assert big["tokens"] <= 500 and big["budget_tokens"] == 500
    assert big["fact_ids"][0] == pinned["id"]
    assert len(big["fact_ids"]) == 5

    half = big["tokens"] // 2
    small = _json(cli("context", "what do I know about the user?", "--budget", str(half), "--json"))
    assert 0 < small["tokens"] <= half
    assert small["omitted"] > 0 and 0 < len(small["fact_ids"]) < 5
    assert small["fact_ids"][0] == pinned["id"]

    printed = cli("context", "what do I know about the user?", "--budget", "500")
    assert printed.exit_code == 0, printed.output
    assert printed.stdout.startswith("Memory")
    assert "Dana" in printed.stdout and "tokens" in printed.stderr
    assert "dates it holds, in UTC," in printed.stdout
    zoned = cli("context", "what is the user's name?", "--budget", "500", "--tz", "Asia/Tokyo")
    assert zoned.exit_code == 0 and "dates it holds, in Asia/Tokyo," in zoned.stdout
    unknown = cli("context", "what is the user's name?", "--budget", "500", "--tz", "Mars/Base")
    assert unknown.exit_code == 1 and "unknown timezone 'Mars/Base'" in unknown.stderr

    zero = cli("context", "what do I know about the user?", "--budget", "0")
    assert zero.exit_code == 1 and "Error:" in zero.stderr and "budget" in zero.stderr

    tiny = cli("context", "what do I know about the user?", "--budget", "3")
    assert tiny.exit_code == 0 and tiny.stdout == ""
    assert "raise --budget" in tiny.stderr

    tagged = cli("remember", "The user's cello teacher is Ines.", "--tag", "music", "--json")
    only_music = _json(
        cli(
            "context",
            "what do I know about the user?",
            "--budget",
            "500",
            "--tag",
            "music",
            "--kind",
            "fact",
            "--valid-at",
            "2026-01-01T00:00:00Z",
            "--json",
        )
    )
    # The pinned fact has no "music" tag: the call's scope applies to pinned facts too.
    assert only_music["fact_ids"] == [_json(tagged)["id"]]


def test_get_pin_and_unknown_ids(cli: Invoke) -> None:
    fact = _json(cli("remember", "The user has two cats.", "--json"))
    shown = _json(cli("get", fact["id"], "--json"))
    assert shown["kind"] == "fact" and shown["text"] == "The user has two cats."

    assert _json(cli("pin", fact["id"], "--json"))["pinned"] is True
    assert _stats(cli)["pinned"] == 1
    assert _json(cli("pin", fact["id"], "--unpin", "--json"))["pinned"] is False
    assert _stats(cli)["pinned"] == 0

    for command in ("get", "history", "pin"):
        missing = cli(command, "no-such-id")
        assert missing.exit_code == 1, (command, missing.output)
        assert missing.stderr.startswith("Error:") and "no-such-id" in missing.stderr
        assert missing.stdout == ""


def test_tables_show_control_characters_as_escapes(cli: Invoke) -> None:
    text = "line one\nstatus  superseded\r\x1b[31mred"
    fact = _json(cli("remember", text, "--json"))
    assert fact["text"] == text  # stored and given to machines as said
    table = cli("get", fact["id"])
    assert table.exit_code == 0, table.output
    (line,) = [line for line in table.stdout.splitlines() if line.startswith("text ")]
    assert line.endswith("line one\\nstatus  superseded\\r\\x1b[31mred")
    assert "\x1b" not in table.stdout and "\r" not in table.stdout
    # Unicode's line and paragraph separators end a line too (str.splitlines, editors).
    separated = _json(cli("remember", "one\u2028two\u2029three", "--json"))
    table = cli("get", separated["id"])
    (line,) = [line for line in table.stdout.splitlines() if line.startswith("text ")]
    assert line.endswith("one\\u2028two\\u2029three")
    # A context block too, and the block printed is the block given to machines.
    tricky = "The user works at Google.\x1b]0;pwned\x07 \x08XYZ \u202eesrever"
    cli("remember", tricky)
    printed = cli("context", "where does the user work", "--budget", "200")
    assert printed.exit_code == 0, printed.output
    assert "Google.\\x1b]0;pwned\\x07 \\x08XYZ \\u202eesrever (fact " in printed.stdout
    assert all(line.isprintable() for line in printed.stdout.splitlines())
    block = _json(cli("context", "where does the user work", "--budget", "200", "--json"))
    assert printed.stdout.startswith(block["text"] + "\n")


def test_errors_are_json_with_json_and_pinning_needs_a_believed_fact(cli: Invoke) -> None:
    old = _json(cli("remember", "The user drives a Fiat.", "--pinned", "--json"))
    cli("remember", "The user drives a Volvo.", "--supersedes", old["id"])
    refused = cli("pin", old["id"], "--json")
    assert refused.exit_code == 1 and refused.stdout == ""
    error = json.loads(refused.stderr)["error"]
    assert error["type"] == "RetiredFactError" and error["ids"] == [old["id"]]
    assert "only believed facts can be pinned" in error["message"]
    assert _stats(cli)["pinned"] == 1  # the Volvo fact, pinned as the update of a pinned fact
    # context takes recall's options too.
    block = _json(
        cli(
            "context",
            "what car?",
            "--budget",
            "200",
            "--include-retired",
            "--min-score",
            "0",
            "--json",
        )
    )
    assert old["id"] in block["fact_ids"]
    assert (
        old["id"] not in _json(cli("context", "what car?", "--budget", "200", "--json"))["fact_ids"]
    )


def test_stats_counts(cli: Invoke, ns: str, tmp_path: Path) -> None:
    empty = _stats(cli)
    assert empty["ns"] == ns and empty["facts"] == 0 and empty["episodes"] == 0

    old = _json(cli("remember", "The user runs on Sundays.", "--json"))
    cli("remember", "The user runs on Saturdays.", "--supersedes", old["id"])
    cli("remember", "The user likes jazz.", "--references", old["id"])
    _json(cli("ingest", str(_write_jsonl(tmp_path / "m.jsonl", MESSAGES)), "--json"))

    stats = _stats(cli)
    assert stats["facts"] == 3
    assert stats["facts_by_status"] == {
        "active": 2,
        "superseded": 1,
        "merged": 0,
        "retracted": 0,
    }
    assert stats["supersedes"] == 1 and stats["references"] == 1
    assert stats["episodes"] == 3 and stats["sessions"] == 1

    table = cli("stats")
    assert table.exit_code == 0, table.output
    assert "active 2, superseded 1" in table.stdout


def test_ns_option_overrides_the_setting(cli: Invoke, ns: str) -> None:
    other = f"{ns}-other"
    _json(cli("remember", "The user speaks Portuguese.", "--ns", other, "--json"))
    assert _stats(cli)["facts"] == 0
    assert _stats(cli, "--ns", other)["facts"] == 1
    hits = _json(cli("recall", "which language?", "--ns", other, "--json"))
    assert hits["ns"] == other and hits["hits"]

    bad = cli("stats", "--ns", "no spaces allowed")
    assert bad.exit_code == 1 and "Error:" in bad.stderr and "namespace" in bad.stderr


def test_bad_input_is_refused_and_nothing_is_written(cli: Invoke) -> None:
    naive = cli("remember", "The user started a new job.", "--valid-from", "2026-01-01T09:00:00")
    assert naive.exit_code == 1
    assert naive.stderr.startswith("Error:") and "naive datetime" in naive.stderr

    backwards = cli(
        "remember",
        "The user lived in Oslo.",
        "--valid-from",
        "2026-01-01T00:00:00+00:00",
        "--valid-to",
        "2025-01-01T00:00:00+00:00",
    )
    assert backwards.exit_code == 1 and "valid_to" in backwards.stderr

    unknown = cli("remember", "The user moved again.", "--supersedes", "no-such-fact")
    assert unknown.exit_code == 1 and "no-such-fact" in unknown.stderr

    empty = cli("remember", "   ")
    assert empty.exit_code == 1 and "Error:" in empty.stderr

    not_object = cli("remember", "The user has a boat.", "--metadata", "[1]")
    assert not_object.exit_code == 2 and "JSON object" in not_object.output

    naive_recall = cli("recall", "job", "--as-of", "2026-01-01T09:00:00")
    assert naive_recall.exit_code == 1 and "as_of" in naive_recall.stderr

    bad_k = cli("recall", "job", "-k", "0")
    assert bad_k.exit_code == 1 and "k must be" in bad_k.stderr

    lone_reason = cli("remember", "The user likes tea.", "--reason", "just because")
    assert lone_reason.exit_code == 1 and "reason" in lone_reason.stderr

    window = ["--since", "2026-02-01T00:00:00Z", "--until", "2026-01-01T00:00:00Z"]
    backwards_window = cli("recall", "job", *window)
    assert backwards_window.exit_code == 1 and "until" in backwards_window.stderr

    compact = cli("remember", "The user joined.", "--valid-from", "20250101")  # not Unix time
    assert compact.exit_code == 1 and "ISO-8601" in compact.stderr

    year_one = cli("recall", "job", "--as-of", "0001-01-01T00:00:00+01:00")
    assert year_one.exit_code == 1 and year_one.stderr.startswith("Error:")

    not_utf8 = cli("remember", "caf\udce9")  # how Python hands over an argument's bad byte
    assert not_utf8.exit_code == 1 and "lone surrogate" in not_utf8.stderr

    assert _stats(cli)["facts"] == 0


def test_valid_time_travel(cli: Invoke) -> None:
    fact = _json(
        cli(
            "remember",
            "The user worked at Contoso.",
            "--valid-from",
            "2020-01-01T00:00:00+00:00",
            "--valid-to",
            "2022-01-01T00:00:00Z",
            "--json",
        )
    )
    assert fact["valid_from"].startswith("2020-01-01T00:00:00")
    assert fact["valid_to"].startswith("2022-01-01T00:00:00")
    then = _json(
        cli("recall", "where did the user work?", "--valid-at", "2021-06-01T00:00:00Z", "--json")
    )
    assert fact["id"] in [hit["id"] for hit in then["hits"]]
    later = _json(
        cli("recall", "where did the user work?", "--valid-at", "2024-06-01T00:00:00Z", "--json")
    )
    assert fact["id"] not in [hit["id"] for hit in later["hits"]]


def test_times_with_a_zone_id_as_neo4j_writes_them(cli: Invoke) -> None:
    """A time copied from a Cypher result, such as 2021-06-01T10:00:00+01:00[Europe/Lisbon],
    is that instant; a local time with a zone id is read in that zone."""
    fact = _json(
        cli(
            "remember",
            "The user lived in Porto.",
            "--valid-from",
            "2021-06-01T10:00:00[Europe/Lisbon]",
            "--valid-to",
            "2021-12-01T10:00:00+00:00[Europe/Lisbon]",
            "--json",
        )
    )
    assert fact["valid_from"].startswith("2021-06-01T09:00:00")  # summer time, +01:00
    assert fact["valid_to"].startswith("2021-12-01T10:00:00")

    def found(valid_at: str) -> bool:
        hits = _json(cli("recall", "where did the user live?", "--valid-at", valid_at, "--json"))
        return fact["id"] in [hit["id"] for hit in hits["hits"]]

    assert found("2021-06-01T10:00:00+01:00[Europe/Lisbon]")
    assert not found("2021-06-01T09:59:00[Europe/Lisbon]")
    wrong_offset = cli("recall", "where?", "--as-of", "2021-06-01T10:00:00Z[Europe/Lisbon]")
    assert wrong_offset.exit_code == 1 and "+01:00" in wrong_offset.stderr
    unknown = cli("recall", "where?", "--as-of", "2021-06-01T10:00:00[Europe/Porto]")
    assert unknown.exit_code == 1 and "unknown timezone 'Europe/Porto'" in unknown.stderr


_PROBE = """
import sys
from graphmem.cli import main
try:
    main(sys.argv[1:], prog_name="graphmem")
except SystemExit as exit:
    code = exit.code
loaded = {"onnxruntime", "sentence_transformers"} & set(sys.modules)
print("model loaded:", bool(loaded), file=sys.stderr)
sys.exit(code)
"""


def test_commands_that_embed_nothing_never_load_the_model(
    cli: Invoke, graph: Graph, ns: str
) -> None:
    """`get`, `history`, `stats` and refused `remember`, `recall` and `context` calls run
    without loading the embedding model's runtime (ONNX Runtime, or PyTorch)."""
    fact_id = _json(cli("remember", "The user keeps bees.", "--json"))["id"]
    env = {**os.environ, **cli_env(graph, ns)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _PROBE, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    for args in (("get", fact_id, "--json"), ("history", fact_id), ("stats", "--json")):
        done = run(*args)
        assert done.returncode == 0, done.stderr
        assert "model loaded: False" in done.stderr
    assert json.loads(run("get", fact_id, "--json").stdout)["text"] == "The user keeps bees."
    refused = run("remember", "   ")
    assert refused.returncode != 0
    assert "text is empty" in refused.stderr
    assert "model loaded: False" in refused.stderr
    # Nor do recall and context when their input is refused.
    cases: list[tuple[tuple[str, ...], str]] = [
        (("recall", "who keeps bees", "-k", "0"), "k must"),
        (("recall", "   "), "empty"),
        (("context", "who keeps bees", "--budget", "0"), "budget_tokens"),
        (("recall", "bees", "--as-of", "2026-01-01T00:00:00"), "naive"),
    ]
    for command, reason in cases:
        refused = run(*command)
        assert refused.returncode == 1 and reason in refused.stderr, refused.stderr
        assert "model loaded: False" in refused.stderr
    # A command that embeds loads it on first use.
    found = run("recall", "who keeps bees", "--json")
    assert found.returncode == 0, found.stderr
    assert "model loaded: True" in found.stderr
    assert fact_id in found.stdout


def test_consolidate_dry_run_run_undo_and_runs(cli: Invoke) -> None:
    first = _json(cli("remember", "The user drives a blue Fiat.", "--json"))
    second = _json(cli("remember", "the user drives a blue fiat", "--json"))
    preview = _json(cli("consolidate", "--force", "--dry-run", "--json"))
    assert preview["status"] == "dry_run" and preview["applied"][0]["op"] == "MERGE"
    table = cli("consolidate", "--force")
    assert table.exit_code == 0, table.output
    assert "MERGE" in table.output and "finished" in table.output
    runs = _json(cli("consolidate", "runs", "--json"))
    assert runs[0]["status"] == "finished" and runs[0]["applied"][0]["facts"] == [
        first["id"],
        second["id"],
    ]
    assert _json(cli("get", second["id"], "--json"))["status"] == "merged"
    undone = _json(cli("consolidate", "undo", runs[0]["id"], "--json"))
    assert undone["restored_facts"] == 2
    assert _json(cli("get", second["id"], "--json"))["status"] == "active"
    again = cli("consolidate", "undo", runs[0]["id"], "--json")
    assert again.exit_code != 0 and "undone already" in again.output
    skipped = _json(cli("consolidate", "--json"))
    assert skipped["status"] == "skipped" and skipped["reason"]


def test_contradict_resolve_and_retract_from_the_command_line(cli: Invoke) -> None:
    a = _json(cli("remember", "The launch is in May.", "--json"))
    b = _json(
        cli(
            "remember",
            "The launch is in June.",
            "--contradicts",
            a["id"],
            "--reason",
            "dates",
            "--json",
        )
    )
    assert [c["id"] for c in b["contradictions"]] == [a["id"]]
    c = _json(cli("remember", "The launch party is on a boat.", "--json"))
    both = _json(cli("contradict", a["id"], c["id"], "--reason", "unsure", "--json"))
    assert {f["id"] for f in both} == {a["id"], c["id"]}
    kept = _json(cli("resolve", a["id"], b["id"], "--keep", b["id"], "--json"))
    assert kept[1]["status"] == "superseded"
    retracted = _json(cli("retract", c["id"], "--reason", "no boat", "--json"))
    assert retracted["status"] == "retracted" and retracted["retraction_reason"] == "no boat"
    refused = cli("retract", c["id"], "--json")
    assert refused.exit_code != 0 and "retracted" in refused.output
