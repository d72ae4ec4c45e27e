from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from graphmem.cli import main


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        assert command is not None
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def test_every_command_has_help_with_an_example() -> None:
    runner = CliRunner()
    commands = _commands(main)
    assert ("neo4j", "start") in commands and ("init",) in commands and ("demo",) in commands
    memory_commands = ["remember", "ingest", "recall", "context", "get", "history", "stats", "pin"]
    for name in memory_commands:
        assert (name,) in commands, f"`graphmem {name}` is missing"
    assert ("eval", "run") in commands and ("eval", "beam") in commands and ("bench",) in commands
    for path in commands:
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example:" in result.output, f"`graphmem {' '.join(path)}` help has no example"
        assert "graphmem" in result.output.split("Example:", 1)[1]
        # Examples are shown as written, one command per line, ready to copy.
        command: click.Command = main
        for name in path:
            assert isinstance(command, click.Group)
            found = command.get_command(click.Context(command), name)
            assert found is not None
            command = found
        example = (command.help or "").split("Example:", 1)[1]
        shown = [line.strip() for line in result.output.splitlines()]
        for line in example.splitlines():
            if line.strip().startswith("graphmem"):
                assert line.strip() in shown, (path, line)


def test_config_masks_the_password() -> None:
    env = {"GRAPHMEM_NEO4J_URI": "bolt://db.example:7687", "GRAPHMEM_NEO4J_PASSWORD": "pw-abcdefgh"}
    result = CliRunner().invoke(main, ["config", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert "pw-abcdefgh" not in result.output
    assert '"neo4j_mode": "external"' in result.output


def test_graphmem_errors_become_one_line_and_exit_1() -> None:
    env = {"GRAPHMEM_NEO4J_URI": "bolt://db.example:7687"}
    result = CliRunner().invoke(main, ["neo4j", "status"], env=env)
    assert result.exit_code == 1
    assert "Error:" in result.output and "external server" in result.output
    bad = CliRunner().invoke(main, ["config"], env={"GRAPHMEM_NEO4J_URI": "ftp://x"})
    assert bad.exit_code == 1 and "GRAPHMEM_NEO4J_URI" in bad.output


def test_the_drivers_warnings_stay_off_stderr() -> None:
    """stderr is graphmem's error line or JSON: a warning the driver logs (a transaction it
    retries and then commits) must not reach it. In a process of its own, since pytest's log
    capture would hide the warning from stderr anyway."""
    code = (
        "import logging\n"
        "from graphmem.cli import main\n"
        "@main.command('noisy')\n"
        "def noisy():\n"
        "    logging.getLogger('neo4j.pool').warning('Transaction failed and will be retried')\n"
        "    logging.getLogger('graphmem.elsewhere').warning('a warning of its own')\n"
        "main(['noisy'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "a warning of its own\n"


def test_under_json_stderr_is_one_object_whatever_was_logged() -> None:
    """A failing command under --json: the driver's error line and a library's warning go
    into the error object, not before it."""
    code = (
        "import logging, warnings, click\n"
        "from graphmem.cli import main\n"
        "from graphmem.cli.output import json_option\n"
        "from graphmem.errors import Neo4jUnavailableError\n"
        "@main.command('noisy')\n"
        "@json_option('JSON')\n"
        "def noisy(as_json):\n"
        "    logging.getLogger('neo4j.io').error('Failed to read from defunct connection')\n"
        "    warnings.warn('a library warns')\n"
        "    raise Neo4jUnavailableError('Neo4j became unavailable')\n"
        "main(['noisy', '--json'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1 and done.stdout == ""
    error = json.loads(done.stderr)["error"]
    assert error["type"] == "Neo4jUnavailableError"
    assert error["log"][0] == "neo4j.io: ERROR: Failed to read from defunct connection"
    assert "a library warns" in error["log"][1]


def test_metadata_must_be_a_json_object() -> None:
    for bad in ("[1, 2]", "{not json", '{"a": 1, "a": 2}'):
        result = CliRunner().invoke(main, ["remember", "a fact", "--metadata", bad])
        assert result.exit_code == 2, result.output
        assert "--metadata" in result.output
    result = CliRunner().invoke(main, ["remember", "a fact", "--metadata", '{"a": 1, "a": 2}'])
    assert "the key 'a' appears twice" in result.output


def test_ingest_with_a_bad_line_writes_nothing_and_needs_no_database(tmp_path: Path) -> None:
    path = tmp_path / "messages.jsonl"
    path.write_text('{"content": "hello"}\n{"content": \n', encoding="utf-8")
    env = {"GRAPHMEM_NEO4J_URI": "bolt://127.0.0.1:1"}  # nothing listens there
    result = CliRunner().invoke(main, ["ingest", str(path)], env=env)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "Error:" in result.stderr and "line 2" in result.stderr


def test_ingest_reports_a_line_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "messages.jsonl"
    path.write_bytes('\ufeff{"content": "café"}\n'.encode() + b'{"content": "\xff"}\n')
    env = {"GRAPHMEM_NEO4J_URI": "bolt://127.0.0.1:1"}
    result = CliRunner().invoke(main, ["ingest", str(path)], env=env)
    assert result.exit_code == 1 and result.stdout == ""
    assert "line 2" in result.stderr and "not valid UTF-8" in result.stderr
    assert "line 1" not in result.stderr  # the byte-order mark and the accent are fine


def test_with_json_an_error_is_a_json_object_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "messages.jsonl"
    lines = ['{"content": "hello"}', '{"content": 5}'] + ['{"content": ""}'] * 11
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {"GRAPHMEM_NEO4J_URI": "bolt://127.0.0.1:1"}  # nothing listens there
    result = CliRunner().invoke(main, ["ingest", str(path), "--json"], env=env)
    assert result.exit_code == 1 and result.stdout == ""
    error = json.loads(result.stderr)["error"]
    assert error["type"] == "BadLinesError"
    assert len(error["bad_lines"]) == 12  # every one, where the message stops at ten
    assert error["bad_lines"][0] == {
        "line": 2,
        "reason": "content: Input should be a valid string, got 5",
    }
    plain = CliRunner().invoke(main, ["ingest", str(path)], env=env)
    assert plain.exit_code == 1 and plain.stderr.startswith("Error: 12 malformed line(s)")


def test_python_dash_m_graphmem_is_the_graphmem_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "graphmem", "stats", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: graphmem stats [OPTIONS]")
