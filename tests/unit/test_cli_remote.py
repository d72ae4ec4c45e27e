"""The CLI's remote mode without a server: with GRAPHMEM_SERVER_URL set, the memory commands
call it (a closed port is a ServiceError, not a Neo4j one), and what only works on the
database's own machine is refused naming the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from tests.helpers import free_port


def _run(tmp_path: Path, *args: str, **env: str) -> Result:
    settings = {
        "GRAPHMEM_SERVER_URL": f"http://127.0.0.1:{free_port()}",
        "GRAPHMEM_API_KEY": "gmk_000000000000_test",
        "GRAPHMEM_DATA_DIR": str(tmp_path / "data"),
        **env,
    }
    return CliRunner().invoke(main, list(args), env=settings)


def test_a_memory_command_calls_the_server(tmp_path: Path) -> None:
    done = _run(tmp_path, "recall", "where?", "--json")
    assert done.exit_code == 1
    error = json.loads(done.stderr)["error"]
    assert error["type"] == "ServiceError" and "could not be reached" in error["message"]


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"GRAPHMEM_API_KEY": ""}, "GRAPHMEM_API_KEY"),
        ({"GRAPHMEM_SERVER_URL": "localhost:8080"}, "GRAPHMEM_SERVER_URL"),
    ],
)
def test_a_missing_key_or_a_malformed_url_names_its_setting(
    tmp_path: Path, env: dict[str, str], named: str
) -> None:
    done = _run(tmp_path, "stats", **env)
    assert done.exit_code == 1 and named in done.stderr


def test_what_only_the_database_machine_can_do_is_refused(tmp_path: Path) -> None:
    actor = _run(tmp_path, "forget", "f-1", "--reason", "r", "--actor", "me", "--yes")
    assert actor.exit_code == 1 and "--actor cannot be chosen" in actor.stderr
    physical = _run(tmp_path, "forget", "--verify", "f-1", "--text", "t", "--physical")
    assert physical.exit_code == 1 and "GRAPHMEM_SERVER_URL is set" in physical.stderr
