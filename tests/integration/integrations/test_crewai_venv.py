"""The CrewAI adapter's tests (test_crewai.py) from CrewAI's own virtualenv, ``.venv-crewai``
(CrewAI's pins cannot share the main one: see the crewai extra), on this session's Neo4j, so
that they start no server of their own. Like a test with ``fresh_graph``, that run empties
the database and applies the schema again. Skipped where ``.venv-crewai`` is missing (``make
install-crewai`` builds it, ``make test`` too) and where CrewAI is installed here, as then
test_crewai.py runs in this session itself."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphmem.client.graph import Graph

ROOT = Path(__file__).resolve().parents[3]
PYTHON = ROOT / ".venv-crewai" / "bin" / "python"


def test_the_crewai_tests_pass_in_their_virtualenv(graph: Graph) -> None:
    if importlib.util.find_spec("crewai") is not None:
        pytest.skip("CrewAI is installed here: test_crewai.py runs in this session")
    if not PYTHON.exists():
        pytest.skip(f"no {PYTHON.relative_to(ROOT)}: make install-crewai builds it")
    target = graph.target
    env = {
        **os.environ,
        "GRAPHMEM_TEST_NEO4J_URI": target.uri,
        "GRAPHMEM_TEST_NEO4J_USER": target.user,
        "GRAPHMEM_TEST_NEO4J_PASSWORD": target.password.get_secret_value(),
        "GRAPHMEM_TEST_NEO4J_DATABASE": target.database,
    }
    module = Path(__file__).with_name("test_crewai.py")
    done = subprocess.run(
        [str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    sys.stdout.write(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
