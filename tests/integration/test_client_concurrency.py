"""The clients under concurrent calls, cancellation and closing, against the real Neo4j."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import numpy as np
import pytest

from graphmem.embeddings import SentenceTransformerEmbedder, Vectors, check_vectors
from graphmem.graph import Graph
from graphmem.memory import AsyncMemory
from graphmem.settings import GraphmemSettings


class _AxisEmbedder:
    """Embeds the query "alpha" as the first axis and "omega" as the second, under the model id
    of the graph's embedder, so that the two queries rank facts on a quarter circle between
    the axes in opposite vector orders."""

    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id, self.dimension = model_id, dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            row[0 if text == "alpha" else 1] = 1.0
        return check_vectors(rows, self.dimension)


def test_concurrent_recalls_ranking_the_same_facts_differently_do_not_deadlock(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: SentenceTransformerEmbedder,
    ns: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Each recall stamps the facts it found in one write. "alpha" and "omega" rank the same
    # facts in different orders; stamped in rank order, two such recalls would lock the
    # same facts in opposite orders, and Neo4j would break the deadlock by failing one of them
    # (retried by the driver after a pause, or failed once the retries run out).
    axes = _AxisEmbedder(embedder.model_id, embedder.dimension)
    client = AsyncMemory(test_settings, target=graph.target, embedder=axes, ns=ns)
    count = 12
    angles = np.linspace(0.05, np.pi / 2 - 0.05, count)
    vectors = np.zeros((count, embedder.dimension), dtype=np.float32)
    vectors[:, 0], vectors[:, 1] = np.cos(angles), np.sin(angles)

    async def scenario() -> list[list[str]]:
        async with client:
            await client.remember_many(
                [f"alpha omega item {i}" for i in range(count)], vectors=vectors
            )
            with caplog.at_level(logging.WARNING, logger="neo4j"):
                results = await asyncio.gather(
                    *(
                        client.recall(("alpha", "omega")[i % 2], k=count, kinds=["fact"])
                        for i in range(24)
                    )
                )
            return [[hit.id for hit in result.hits] for result in results]

    rankings = asyncio.run(scenario())
    assert len(rankings[0]) == count and sorted(rankings[0]) == sorted(rankings[1])
    assert rankings[0] != rankings[1]  # the same facts, in different orders
    deadlocks = [r for r in caplog.records if "DeadlockDetected" in r.getMessage()]
    assert deadlocks == []
