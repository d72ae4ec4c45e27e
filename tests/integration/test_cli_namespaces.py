"""`graphmem namespaces` (with `namespaces drop`), `graphmem export` and `graphmem import`
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

    def invoke(*args: str, stdin: str | None = None) -> Result:
        return CliRunner().invoke(main, list(args), env=env, input=stdin)

    return invoke


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    def bare(doc: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in r.items() if k not in ("exported_at", "finished_at")} for r in doc
        ]

    return bare(a) == bare(b)


def test_list_export_drop_and_import_from_the_command_line(
    cli: Any, ns: str, tmp_path: Path
) -> None:
    old = _json(cli("remember", "Ada works at Acme.", "--json"))
    new = _json(cli("remember", "Ada works at Globex.", "--supersedes", old["id"], "--json"))
    assert cli("forget", old["id"], "--reason", "request", "--yes").exit_code == 0
    listed = {row["ns"]: row for row in _json(cli("namespaces", "--json"))}
    assert listed[ns]["facts"] == 1 and listed[ns]["forgotten_facts"] == 1
    assert listed[ns]["last_write_at"] is not None
    table = cli("namespaces")
    assert table.exit_code == 0 and ns in table.output and "LAST_WRITE" in table.output
    rows = cli("namespaces", "--csv").output.splitlines()
    assert rows[0].startswith("ns,facts,") and any(row.startswith(f"{ns},1,") for row in rows)
    # Export to a file, with a summary; and to stdout.
    file = tmp_path / "export.jsonl"
    summary = _json(cli("export", "-o", str(file), "--json"))
    assert summary["nodes"] == {"Fact": 1, "Tombstone": 1} and summary["relationships"] == 1
    doc = _lines(file)
    assert doc[0]["record"] == "header" and doc[0]["ns"] == ns and doc[-1]["record"] == "end"
    assert not (tmp_path / "export.jsonl.partial").exists()
    piped = cli("export")
    assert piped.exit_code == 0
    assert _same([json.loads(line) for line in piped.stdout.splitlines()], doc)
    # An import into the namespace while it holds something is refused, with a JSON error.
    refused = cli("import", str(file), "--json")
    assert refused.exit_code == 1
    assert json.loads(refused.stderr)["error"]["type"] == "NamespaceNotEmptyError"
    # A drop needs --yes where no one can answer; --dry-run shows what would go.
    asked = cli("namespaces", "drop", ns)
    assert asked.exit_code == 2 and "--yes" in asked.output
    assert cli("namespaces", "drop", ns, "--json").exit_code == 2
    preview = _json(cli("namespaces", "drop", ns, "--dry-run", "--json"))
    assert preview["dry_run"] and preview["nodes"] == {"Fact": 1, "Tombstone": 1}
    dropped = _json(cli("namespaces", "drop", ns, "--yes", "--json"))
    assert dropped["nodes"] == {"Fact": 1, "Tombstone": 1}
    after = cli("namespaces", "--json")  # exit 3 when no namespace is left at all
    assert after.exit_code in (0, 3) and ns not in {row["ns"] for row in json.loads(after.stdout)}
    gone = cli("namespaces", "drop", ns, "--yes")
    assert gone.exit_code == 3 and "holds nothing" in gone.stderr
    # Import from the file: the same document again.
    imported = _json(cli("import", str(file), "--json"))
    assert imported["nodes"] == {"Fact": 1, "Tombstone": 1} and imported["remapped"] == {}
    again = tmp_path / "again.jsonl"
    assert cli("export", "-o", str(again)).exit_code == 0
    assert _same(_lines(again), doc)
    assert _json(cli("get", new["id"], "--json"))["text"] == "Ada works at Globex."
    # And from standard input into another namespace, as a table.
    copied = cli("import", "-", "--ns", f"{ns}-copy", stdin=file.read_text(encoding="utf-8"))
    assert copied.exit_code == 0, copied.output
    assert "ids given new values" in copied.output and "Fact 1" in copied.output


def test_a_file_that_is_not_a_whole_export_is_refused(cli: Any, ns: str, tmp_path: Path) -> None:
    assert cli("remember", "Ada works at Acme.").exit_code == 0
    file = tmp_path / "export.jsonl"
    assert cli("export", "-o", str(file)).exit_code == 0
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(file.read_text(encoding="utf-8").splitlines(True)[:-1]))
    refused = cli("import", str(cut), "--ns", f"{ns}-cut")
    assert refused.exit_code == 1 and "cut short" in refused.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text(file.read_text(encoding="utf-8").replace("}\n", "\n", 1))
    bad = cli("import", str(broken), "--ns", f"{ns}-broken", "--json")
    assert bad.exit_code == 1
    assert json.loads(bad.stderr)["error"]["type"] == "ExportFormatError"
    missing = cli("import", str(tmp_path / "nothing.jsonl"), "--ns", f"{ns}-none")
    assert missing.exit_code == 1 and "cannot read" in missing.output
    empty = cli("export", "--ns", f"{ns}-never-written")
    assert empty.exit_code == 3 and "holds nothing" in empty.stderr
    assert cli("export", "--json").exit_code == 2  # --json describes a file written with -o
