"""Writes through Bolt, reads back through Neo4j's vector and fulltext indexes."""

from __future__ import annotations

from typing import Any

import neo4j
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.cypher import query
from graphmem.embeddings import SentenceTransformerEmbedder
from graphmem.facts import new_fact_rows
from graphmem.fulltext import lucene_query
from graphmem.graph import Graph

TEXTS = [
    "I work at Google as a site reliability engineer.",
    "My daughter plays the cello in the school orchestra.",
    "We are moving to Porto in the spring.",
    "I am vegetarian and avoid mushrooms.",
]


def _rows(ns: str, texts: list[str], embedder: SentenceTransformerEmbedder) -> list[dict[str, Any]]:
    return new_fact_rows(ns, texts, embedder.embed(texts), source="test", tags=["t"])


def test_write_then_read_back_through_both_index_procedures(
    graph: Graph, embedder: SentenceTransformerEmbedder, ns: str
) -> None:
    rows = _rows(ns, TEXTS, embedder)
    written = graph.execute(query("fact_create_batch"), facts=rows)
    assert [r["id"] for r in written] == [r["id"] for r in rows]

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
    hits, _, _ = graph.driver.execute_query(
        "CALL db.index.vector.queryNodes('fact_embedding', 50, $vector) YIELD node, score "
        "WHERE node.ns = $ns RETURN node.text AS text, score ORDER BY score DESC",
        vector=vector,
        ns=ns,
        database_=graph.database,
        routing_=neo4j.RoutingControl.READ,
    )
    assert hits[0]["text"] == TEXTS[0]

    hits, _, _ = graph.driver.execute_query(
        "CALL db.index.fulltext.queryNodes('fact_text', $q) YIELD node, score "
        "WHERE node.ns = $ns RETURN node.text AS text, score ORDER BY score DESC",
        q=lucene_query("orchestra cellos"),
        ns=ns,
        database_=graph.database,
        routing_=neo4j.RoutingControl.READ,
    )
    assert [h["text"] for h in hits] == [TEXTS[1]]  # "cellos" stems to "cello"


def test_named_search_queries_stay_inside_their_namespace(
    graph: Graph, embedder: SentenceTransformerEmbedder, ns: str
) -> None:
    other = ns + "-other"
    graph.execute(query("fact_create_batch"), facts=_rows(ns, TEXTS[:2], embedder))
    graph.execute(query("fact_create_batch"), facts=_rows(other, TEXTS, embedder))
    vector = embedder.embed(["moving house"])[0].tolist()
    hits = graph.execute(query("fact_vector_search"), ns=ns, vector=vector, candidates=100, k=10)
    assert {h["text"] for h in hits} == set(TEXTS[:2])
    hits = graph.execute(
        query("fact_fulltext_search"), ns=ns, query=lucene_query("Porto"), candidates=100, k=10
    )
    assert hits == []
    hits = graph.execute(
        query("fact_fulltext_search"), ns=other, query=lucene_query("Porto"), candidates=100, k=10
    )
    assert [h["text"] for h in hits] == [TEXTS[2]]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=40))
def test_any_user_text_is_a_valid_fulltext_query(graph: Graph, text: str) -> None:
    escaped = lucene_query(text)
    if escaped is None:
        return
    graph.execute(
        query("fact_fulltext_search"), ns="no-such-namespace", query=escaped, candidates=5, k=5
    )


def test_lucene_syntax_in_user_text_is_taken_literally(
    graph: Graph, embedder: SentenceTransformerEmbedder, ns: str
) -> None:
    texts = ["The budget is 2+2 million (approx.) for project:alpha", "Nothing to see here"]
    graph.execute(query("fact_create_batch"), facts=_rows(ns, texts, embedder))
    for user_text in ("project:alpha", "2+2", "(approx.)", "alpha AND NOT budget"):
        hits = graph.execute(
            query("fact_fulltext_search"), ns=ns, query=lucene_query(user_text), candidates=10, k=10
        )
        assert [h["text"] for h in hits] == [texts[0]], user_text
