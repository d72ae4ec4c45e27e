"""The path recall's vector read takes by the namespace's size, against the real Neo4j: a
namespace that holds no more entries than the read asks for is scored exactly, a larger one is
read through the index (filtered inside it where the server can), with the same hits; and the
whole search is one statement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphmem.client.graph import Graph
from graphmem.core.recall import statements
from graphmem.testing import statement_times
from tests.integration.conftest import Client

#: Runs on Neo4j 5.26 too (where the larger namespace is read from the whole index).
pytestmark = pytest.mark.both_versions

TEXTS = [
    "Ada plays the cello in a string quartet.",
    "Ada's quartet rehearses on Thursday evenings.",
    "Ada bought a new bow for her cello last spring.",
    "Ada works as a structural engineer in Porto.",
    "Ada is learning Portuguese at an evening class.",
    "Ada's brother Tom lives in Leeds.",
    "Ada is allergic to peanuts.",
    "Ada runs along the river every morning.",
    "Ada's favourite composer is Dvořák.",
    "Ada drives an old blue Volvo.",
]
QUESTION = "Which instrument does Ada play?"
OPTIONS: dict[str, Any] = {
    "k": 5,
    "kinds": ["fact"],
    "config": {"retrievers": ("vector",)},
    "min_score": 0.0,
    "track_access": False,
}


def _filler(count: int, dimension: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, dimension))
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


def test_a_namespace_crossing_the_exact_cap_switches_path_and_keeps_its_hits(
    memory: Client, graph: Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cap is what the read asks for (60 entries at k=5) on every server here.
    monkeypatch.setattr(statements, "EXACT_UP_TO", 0)
    memory.remember_many([{"text": t} for t in TEXTS])
    small = memory.recall(QUESTION, **OPTIONS)
    assert small.vector_paths == {"fact": "exact"}
    assert not small.widened and not small.exact_fallback
    assert small.hits[0].text == TEXTS[0]

    # 100 more facts, far from the question: past the cap, the index is read instead.
    vectors = _filler(100, len(memory.raw.embedder.embed(["x"])[0]), seed=11)
    memory.remember_many(
        [{"text": f"Filler fact number {i}."} for i in range(100)], vectors=vectors
    )
    with statement_times() as timed:
        large = memory.recall(QUESTION, **OPTIONS)
    path = "filtered" if graph.schema.filtered_search else "unfiltered"
    assert large.vector_paths == {"fact": path}
    assert [h.id for h in large.hits] == [h.id for h in small.hits]
    assert [h.scores.vector for h in large.hits] == pytest.approx(
        [h.scores.vector for h in small.hits]
    )
    if graph.schema.filtered_search:
        # One statement searches (no schema read or count of its own), one reads the details.
        names = [t.name for t in timed]
        assert names == ["recall_search_filtered", "recall_details", "transaction:read"]
        assert all(t.server_ms is not None for t in timed[:2])


def test_statement_times_time_nothing_outside_their_block(memory: Client) -> None:
    memory.remember("Ada plays the cello.")
    with statement_times() as timed:
        memory.recall(QUESTION, **OPTIONS)
    seen = len(timed)
    memory.recall(QUESTION, **OPTIONS)
    assert seen >= 2 and len(timed) == seen
    assert all(t.client_ms >= 0 for t in timed)
