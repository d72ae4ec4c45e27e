"""Writes through Bolt, reads back through Neo4j's vector and fulltext indexes."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.core.recall.fulltext import lucene_query
from graphmem.embed.embedder import Embedder
from graphmem.models import Fact
from graphmem.settings import GraphmemSettings

#: Runs on Neo4j 5.26 too (schema, indexes and migrations).
pytestmark = pytest.mark.both_versions

TEXTS = [
    "I work at Google as a site reliability engineer.",
    "My daughter plays the cello in the school orchestra.",
    "We are moving to Porto in the spring.",
    "I am vegetarian and avoid mushrooms.",
]


def _write(
    graph: Graph,
    settings: GraphmemSettings,
    embedder: Embedder,
    ns: str,
    texts: list[str],
) -> list[Fact]:
    with Memory(settings, target=graph.target, embedder=embedder, ns=ns) as memory:
        return memory.remember_many([{"text": t, "source": "test", "tags": ["t"]} for t in texts])


def _search(graph: Graph, procedure: str, **params: Any) -> list[dict[str, Any]]:
    """Index hits of one namespace, best first, straight from the index procedure (asked for
    enough candidates that other tests' facts in the shared database cannot crowd them out)."""
    call = {
        "vector": "CALL db.index.vector.queryNodes('fact_embedding', 5000, $vector)",
        "fulltext": "CALL db.index.fulltext.queryNodes('fact_text', $query, {limit: 5000})",
    }[procedure]
    records, _, _ = graph.driver.execute_query(
        f"{call} YIELD node, score WHERE node.ns = $ns "
        "RETURN node.text AS text, score ORDER BY score DESC",
        params,
        database_=graph.database,
        routing_=neo4j.RoutingControl.READ,
    )
    return [dict(r) for r in records]


def test_write_then_read_back_through_both_index_procedures(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    written = _write(graph, test_settings, embedder, ns, TEXTS)
    assert [f.text for f in written] == TEXTS

    stored, _, _ = graph.driver.execute_query(
        "MATCH (f:Fact {ns: $ns}) RETURN f.status AS status, f.recorded_at AS recorded_at, "
        "f.access_count AS access_count, size(f.embedding) AS dims",
        ns=ns,
        database_=graph.database,
        routing_=neo4j.RoutingControl.READ,
    )
    assert len(stored) == 4
    assert all(
        r["status"] == "active"
        and r["access_count"] == 0
        and r["dims"] == 384
        and r["recorded_at"] is not None
        for r in stored
    )

    vector = embedder.embed(["Where does the user work?"])[0].tolist()
    hits = _search(graph, "vector", ns=ns, vector=vector)
    assert hits[0]["text"] == TEXTS[0]

    hits = _search(graph, "fulltext", ns=ns, query=lucene_query("orchestra cellos"))
    assert [h["text"] for h in hits] == [TEXTS[1]]  # "cellos" stems to "cello"


def test_index_hits_filtered_by_namespace_stay_inside_it(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    other = ns + "-other"
    _write(graph, test_settings, embedder, ns, TEXTS[:2])
    _write(graph, test_settings, embedder, other, TEXTS)
    vector = embedder.embed(["moving house"])[0].tolist()
    hits = _search(graph, "vector", ns=ns, vector=vector)
    assert {h["text"] for h in hits} == set(TEXTS[:2])
    assert _search(graph, "fulltext", ns=ns, query=lucene_query("Porto")) == []
    hits = _search(graph, "fulltext", ns=other, query=lucene_query("Porto"))
    assert [h["text"] for h in hits] == [TEXTS[2]]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=40))
def test_any_user_text_is_a_valid_fulltext_query(graph: Graph, text: str) -> None:
    escaped = lucene_query(text)
    if escaped is None:
        return
    _search(graph, "fulltext", ns="no-such-namespace", query=escaped)


def test_lucene_syntax_in_user_text_is_taken_literally(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    texts = ["The budget is 2+2 million (approx.) for project:alpha", "Nothing to see here"]
    _write(graph, test_settings, embedder, ns, texts)
    for user_text in ("project:alpha", "2+2", "(approx.)", "alpha AND NOT budget"):
        hits = _search(graph, "fulltext", ns=ns, query=lucene_query(user_text))
        assert [h["text"] for h in hits] == [texts[0]], user_text
