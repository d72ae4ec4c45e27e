"""A short end-to-end check: write facts through Bolt, read them back through both indexes."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import neo4j

from graphmem.cypher import query
from graphmem.embeddings import Embedder
from graphmem.facts import new_fact_rows
from graphmem.fulltext import lucene_query
from graphmem.graph import Graph

DEMO_FACTS = (
    "The user works at Microsoft as a data engineer.",
    "The user's sister Ana lives in Lisbon.",
    "The user drinks oat-milk flat whites every morning.",
    "The user is allergic to peanuts.",
    "The user is training for the Berlin marathon in September.",
    "The user's laptop is a ThinkPad X1 running Debian.",
)

#: (question, the fact that should come first) for each index.
VECTOR_PROBE = ("Where is the user employed?", DEMO_FACTS[0])
FULLTEXT_PROBE = ("marathon training", DEMO_FACTS[4])


@dataclass
class DemoResult:
    namespace: str
    written: int
    write_seconds: float
    vector_hits: list[dict[str, Any]] = field(default_factory=list)
    fulltext_hits: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(
            self.vector_hits
            and self.vector_hits[0]["text"] == VECTOR_PROBE[1]
            and self.fulltext_hits
            and self.fulltext_hits[0]["text"] == FULLTEXT_PROBE[1]
        )


def run_demo(graph: Graph, embedder: Embedder, *, say: Callable[[str], None] = print) -> DemoResult:
    """Write the demo facts into a fresh namespace and query them back."""
    namespace = f"demo-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(2)}"
    rows = new_fact_rows(
        namespace, DEMO_FACTS, embedder.embed(DEMO_FACTS), source="graphmem demo", tags=["demo"]
    )
    began = time.perf_counter()
    written = graph.execute(query("fact_create_batch"), facts=rows)
    result = DemoResult(namespace, len(written), time.perf_counter() - began)
    say(
        f"wrote {result.written} facts to namespace {namespace!r} "
        f"in {result.write_seconds * 1000:.0f} ms"
    )

    question, _ = VECTOR_PROBE
    result.vector_hits = _show(
        say,
        f"vector index, {question!r}",
        graph.execute(
            query("fact_vector_search"),
            ns=namespace,
            vector=embedder.embed([question])[0].tolist(),
            candidates=50,
            k=3,
        ),
    )
    words, _ = FULLTEXT_PROBE
    result.fulltext_hits = _show(
        say,
        f"fulltext index, {words!r}",
        graph.execute(
            query("fact_fulltext_search"),
            ns=namespace,
            query=lucene_query(words),
            candidates=50,
            k=3,
        ),
    )
    return result


def _show(
    say: Callable[[str], None], title: str, records: list[neo4j.Record]
) -> list[dict[str, Any]]:
    hits = [dict(r) for r in records]
    say(f"\n{title}:")
    for hit in hits:
        say(f"  {hit['score']:.3f}  {hit['text']}")
    return hits
