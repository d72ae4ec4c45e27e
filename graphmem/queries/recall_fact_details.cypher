// name: recall_fact_details
// mode: read
// params: ns, ids, vector, expand, as_of, valid_at, include_retired, tags, since, until
// returns: fact, provenance, references
// The facts a recall keeps: their properties, the episodes they were derived from, and (with
// $expand) the visible facts they reference or that reference them, one hop, with those facts'
// cosine similarity to the query (the hits' own similarity came with the search).
UNWIND $ids AS id
MATCH (node:Fact {id: id})
WHERE node.ns = $ns
WITH node AS f, {{fact_map}} AS fact
RETURN fact,
       [(f)-[:DERIVED_FROM]->(e:Episode) WHERE e.ns = $ns
        | e {.id, .external_id, .session_id}] AS provenance,
       CASE WHEN $expand
         THEN [(f)-[:REFERENCES]-(node:Fact) WHERE {{fact_visible}}
               | {fact: {{fact_map}},
                  similarity: vector.similarity.cosine(node.embedding, $vector),
                  provenance: [(node)-[:DERIVED_FROM]->(e:Episode) WHERE e.ns = $ns
                               | e {.id, .external_id, .session_id}]}]
         ELSE [] END AS references
