"""The notebooks run top to bottom against the test Neo4j; some leave answers to check."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib.image
import pytest

from graphmem.client.graph import Graph

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

LYON, BERLIN, OSLO = "Sam lives in Lyon.", "Sam lives in Berlin.", "Sam lives in Oslo."
PIANO, PIANO_COPY = "Sam plays jazz piano.", "sam plays jazz piano"
TEA, COFFEE = "Sam drinks tea every morning.", "Sam drinks only coffee."
MERGE_REASON = "same text once case, punctuation and spacing are ignored"

#: What belief_timeline.ipynb must find: the texts believed at each probe (newest first),
#: those believed at each probe to be true on 2024-06-01, the changes and the statuses now.
TIMELINE_ANSWERS: dict[str, object] = {
    "believed_at_t1": [LYON],
    "believed_at_t2": [BERLIN],
    "believed_at_t3": [PIANO_COPY, PIANO, OSLO],
    "believed_at_t4": [COFFEE, TEA, PIANO, OSLO],
    "believed_at_t5": [COFFEE, PIANO, OSLO],
    "believed_at_now": [COFFEE, PIANO, OSLO],
    "true_at_2024_06_01_as_of_t1": [LYON],
    "true_at_2024_06_01_as_of_t2": [BERLIN],
    "true_at_2024_06_01_as_of_t4": [COFFEE, TEA, PIANO, BERLIN],
    "true_at_2024_06_01_as_of_now": [COFFEE, PIANO, BERLIN],
    "retired_t2_t4": [
        ("superseded", BERLIN, OSLO, "Sam moved again"),
        ("merged", PIANO_COPY, PIANO, MERGE_REASON),
    ],
    "retired_t4_now": [("superseded", TEA, COFFEE, "Sam confirmed: coffee only")],
    "contradictions": [(COFFEE, TEA, COFFEE, "Sam confirmed: coffee only")],
    "timeline_of_lyon": [
        ("recorded", LYON),
        ("recorded", BERLIN),
        ("superseded", LYON),
        ("recorded", OSLO),
        ("superseded", BERLIN),
    ],
    "status_now": {
        LYON: "superseded",
        BERLIN: "superseded",
        OSLO: "active",
        PIANO: "active",
        PIANO_COPY: "merged",
        TEA: "superseded",
        COFFEE: "active",
    },
}


def check_png(png: Path) -> None:
    """A real PNG of a readable size, not blank."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", png
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 800 and height >= 600, (width, height)
    assert len(data) > 20_000, len(data)
    pixels = matplotlib.image.imread(png)
    assert pixels.shape[:2] == (height, width) and float(pixels.std()) > 0.05


def check_belief_timeline(scope: dict[str, Any], out: Path) -> None:
    answers = scope["answers"]
    assert isinstance(answers, dict)
    for key, expected in TIMELINE_ANSWERS.items():
        assert answers[key] == expected, key
    ids = answers["ids"]
    assert isinstance(ids, dict) and len(set(ids.values())) == 8
    assert answers["forgotten_at_t5"] == [ids["phone"]]  # believed then; its words are gone
    why = answers["explain_berlin"]
    assert isinstance(why, str)
    assert why.startswith(f"'{BERLIN}' (fact {ids['berlin']}) was believed from ")
    assert why.endswith(
        f"replaced by '{OSLO}' (fact {ids['oslo']}) because Sam moved again (by api)."
    )
    # the Cypher library gave the same answers (the notebook asserts each agreement)
    assert answers["cypher_checked"] == [
        "beliefs_as_of",
        "true_at",
        "true_at_as_of",
        "fact_history",
        "fact_lineage",
    ]
    check_png(out / "belief_timeline.png")


#: Checks of what a notebook leaves behind: its scope, and the folder GRAPHMEM_NOTEBOOK_OUT.
CHECKS: dict[str, Callable[[dict[str, Any], Path], None]] = {
    "belief_timeline.ipynb": check_belief_timeline,
}


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs(
    path: Path,
    graph: Graph,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GRAPHMEM_NEO4J_URI", graph.target.uri)
    monkeypatch.setenv("GRAPHMEM_NEO4J_USER", graph.target.user)
    monkeypatch.setenv("GRAPHMEM_NEO4J_PASSWORD", graph.target.password.get_secret_value())
    monkeypatch.setenv("GRAPHMEM_NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("GRAPHMEM_NOTEBOOK_OUT", str(tmp_path))
    monkeypatch.chdir(NOTEBOOKS)
    cells = json.loads(path.read_text())["cells"]
    scope: dict[str, Any] = {"__name__": "__notebook__"}
    started = time.perf_counter()
    for number, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            exec(compile(source, f"{path.name}[{number}]", "exec"), scope)
    seconds = time.perf_counter() - started
    with capsys.disabled():
        print(f"\n{path.name} ran in {seconds:.1f} s")
    check = CHECKS.get(path.name)
    if check is not None:
        check(scope, tmp_path)
