"""The notebooks run top to bottom against the test Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphmem.client.graph import Graph

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs(path: Path, graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_NEO4J_URI", graph.target.uri)
    monkeypatch.setenv("GRAPHMEM_NEO4J_USER", graph.target.user)
    monkeypatch.setenv("GRAPHMEM_NEO4J_PASSWORD", graph.target.password.get_secret_value())
    monkeypatch.setenv("GRAPHMEM_NEO4J_DATABASE", graph.database)
    monkeypatch.chdir(NOTEBOOKS)
    cells = json.loads(path.read_text())["cells"]
    scope: dict[str, object] = {"__name__": "__notebook__"}
    for number, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            exec(compile(source, f"{path.name}[{number}]", "exec"), scope)
