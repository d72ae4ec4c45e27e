"""The benchmark and evaluation part is a plugin: without it the command line has every
service command, with it ``graphmem bench`` and ``graphmem eval`` too, and a broken plugin
leaves the service's commands alone."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import click
import pytest

from graphmem.cli import main
from graphmem.cli.plugins import GROUP, plugins, register_plugins
from tests.unit.test_layout import COMMAND_TREE

#: The commands graphmem-bench adds.
PLUGIN_COMMANDS = {"bench", "eval"}
SERVICE_COMMANDS = {path.split()[1] for path in COMMAND_TREE if path.count(" ") == 1}


def test_the_installed_plugin_adds_bench_and_eval() -> None:
    assert [point.name for point in plugins()] == ["bench"]
    assert set(main.list_commands(click.Context(main))) == SERVICE_COMMANDS
    assert set(main.commands) >= PLUGIN_COMMANDS


def test_a_built_in_command_does_not_look_up_the_plugins() -> None:
    """In a fresh process: running a built-in command reads no package metadata; asking for
    one that is not built in, or for the list, does, once."""
    probe = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from graphmem.cli import main\n"
        "CliRunner().invoke(main, ['config', '--help'])\n"
        "first = main.plugins\n"
        "CliRunner().invoke(main, ['--help'])\n"
        "print(json.dumps([first, main.plugins]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == [None, ["bench"]]


def test_without_the_plugin_every_service_command_is_there() -> None:
    """In a process where no plugin is installed (the entry point group empty)."""
    probe = (
        "import importlib.metadata as m\n"
        "real = m.entry_points\n"
        f"m.entry_points = lambda **kw: [] if kw.get('group') == {GROUP!r} else real(**kw)\n"
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from graphmem.cli import main\n"
        "missing = CliRunner().invoke(main, ['bench', '--help'])\n"
        "import click\n"
        "listed = main.list_commands(click.Context(main))\n"
        "print(json.dumps({'commands': sorted(listed),"
        " 'bench': [missing.exit_code, missing.output],"
        " 'loaded': sorted(n for n in sys.modules if n.startswith('graphmem_bench'))}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found = json.loads(done.stdout)
    assert set(found["commands"]) == SERVICE_COMMANDS - PLUGIN_COMMANDS
    code, output = found["bench"]
    assert code == 2 and "'graphmem bench' comes with graphmem's benchmark" in output
    assert "pip install -e tools/graphmem-bench" in output
    assert found["loaded"] == []


class _Broken:
    def register_commands(self, cli: click.Group) -> None:
        raise RuntimeError("its imports failed")


class _Adds:
    def register_commands(self, cli: click.Group) -> None:
        cli.add_command(click.Command("hello", callback=lambda: None))


def test_a_broken_plugin_is_logged_and_the_others_load(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    found = {"broken": _Broken(), "adds": _Adds()}

    def load(point: EntryPoint) -> Any:
        return found[point.name]

    monkeypatch.setattr(EntryPoint, "load", load)
    points = [EntryPoint(name, f"x:{name}", GROUP) for name in found]
    monkeypatch.setattr("graphmem.cli.plugins.entry_points", lambda group: points)
    cli = click.Group("graphmem")
    assert register_plugins(cli) == ["adds"]
    assert set(cli.commands) == {"hello"}
    assert "'broken' could not be loaded: its imports failed" in caplog.text
