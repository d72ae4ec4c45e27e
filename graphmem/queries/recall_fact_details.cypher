// name: recall_fact_details
// mode: read
// params: ns, ids, vector, expand, as_of, valid_at, include_retired, tags, since, until
// returns: fact, similarity, provenance, references
// The facts a recall keeps: their properties, cosine similarity to the query, the episodes
// they were derived from, and (with $expand) the visible facts they reference or that
// reference them, one hop.
UNWIND $ids AS id
MATCH (node:Fact {id: id})
WHERE node.ns = $ns
WITH node AS f, {{fact_map}} AS fact,
     vector.similarity.cosine(node.embedding, $vector) AS similarity
RETURN fact, similarity,
       [(f)-[:DERIVED_FROM]->(e:Episode) WHERE e.ns = $ns
        | e {.id, .external_id, .session_id}] AS provenance,
       CASE WHEN $expand
         THEN [(f)-[:REFERENCES]-(node:Fact) WHERE {{fact_visible}}
               | {fact: {{fact_map}},
                  similarity: vector.similarity.cosine(node.embedding, $vector),
                  provenance: [(node)-[:DERIVED_FROM]->(e:Episode) WHERE e.ns = $ns
                               | e {.id, .external_id, .session_id}]}]
         ELSE [] END AS references
