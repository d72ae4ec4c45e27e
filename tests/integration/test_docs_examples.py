"""The README's and the docs' examples run against the real Neo4j: every ```python block (a
page's blocks in order, in one namespace, so a later block may use an earlier one's names)
and every ```sh block (bash, with ``graphmem`` on PATH; a page of :data:`SERVED` against a
``graphmem serve`` started for it). ```console blocks are shown, not run: they install, start
servers or take minutes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from tests.helpers import cli_env
from tests.service import new_key, serve_process

ROOT = Path(__file__).resolve().parents[2]
#: Pages whose examples run from a virtualenv of their own, by the test named: CrewAI cannot
#: share the main one (docs/guides/integrations/crewai.md says why).
OWN_VENV = {ROOT / "docs" / "guides" / "integrations" / "crewai.md": "test_crewai.py"}
PAGES = sorted(p for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")] if p not in OWN_VENV)
#: Pages whose ```sh blocks call ``graphmem serve`` (with curl): they run against a server
#: started for the page, its address in ``$SERVER`` and, in ``$KEY``, a write key that opens
#: the namespace ``SERVED_NS``, as the page tells a reader to set them.
SERVED = [ROOT / "docs" / "guides" / "serve.md"]
SERVED_NS = "guide-serve"
_FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


@pytest.fixture(autouse=True)
def _leave_no_trace(graph: Graph) -> Iterator[None]:
    """The examples write into namespaces of their own choosing; what they write is removed
    afterwards, so that tests that search the whole index (not one namespace) after them find
    what they wrote themselves among the nearest neighbours."""

    def namespaces() -> set[str]:
        rows, _, _ = graph.driver.execute_query(
            "MATCH (n) WHERE n.ns IS NOT NULL RETURN DISTINCT n.ns AS ns",
            database_=graph.database,
        )
        return {row["ns"] for row in rows}

    before = namespaces()
    yield
    graph.driver.execute_query(
        "MATCH (n) WHERE n.ns IN $added DETACH DELETE n",
        added=sorted(namespaces() - before),
        database_=graph.database,
    )


def blocks(page: Path, language: str) -> list[str]:
    return [
        body for lang, body in _FENCE.findall(page.read_text(encoding="utf-8")) if lang == language
    ]


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_pages_have_examples_to_run() -> None:
    # The runs below could pass by finding nothing.
    assert sum(len(blocks(page, "python")) for page in PAGES) >= 15
    assert sum(len(blocks(page, "sh")) for page in PAGES) >= 8
    assert blocks(ROOT / "README.md", "python")


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python")], ids=_name)
def test_python_examples_run(
    page: Path, graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in cli_env(graph).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for n, code in enumerate(blocks(page, "python"), 1):
        exec(compile(code, f"{_name(page)} (python block {n})", "exec"), namespace)


def run_shell_blocks(page: Path, env: dict[str, str], cwd: Path) -> None:
    """Each ```sh block of the page in bash (errors, unset variables and failed pipes fail)."""
    for n, code in enumerate(blocks(page, "sh"), 1):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{_name(page)} sh block {n}:\n{code}\n{done.stderr}"


def shell_env(graph: Graph) -> dict[str, str]:
    return {
        **os.environ,
        **cli_env(graph),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


@pytest.mark.parametrize(
    "page", [p for p in PAGES if blocks(p, "sh") and p not in SERVED], ids=_name
)
def test_shell_examples_run(page: Path, graph: Graph, tmp_path: Path) -> None:
    run_shell_blocks(page, shell_env(graph), tmp_path)


@pytest.mark.parametrize("page", SERVED, ids=_name)
def test_served_examples_run(
    page: Path,
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    tmp_path: Path,
) -> None:
    assert blocks(page, "sh"), f"{_name(page)} has no sh block to run against a server"
    assert shutil.which("curl"), "the served examples call curl: install it"
    memory = Memory(test_settings, target=graph.target, embedder=embedder)
    with memory:
        key = new_key(memory, "write", namespaces=[SERVED_NS])
        try:
            with serve_process(graph) as served:
                env = {**shell_env(graph), "SERVER": served.url, "KEY": key.key}
                run_shell_blocks(page, env, tmp_path)
        finally:
            memory.keys.revoke(key.api_key.name)
