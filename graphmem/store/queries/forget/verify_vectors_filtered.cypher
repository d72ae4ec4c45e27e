// name: verify_vectors_filtered
// mode: read
// params: ns, vector, fact_k, episode_k
// returns: index, id, score
// verify_vectors where the vector indexes filter inside the index (Cypher 25's SEARCH, Neo4j
// 2026.01+): the facts and episodes of the namespace itself nearest to $vector, $fact_k and
// $episode_k of them (no more than the index holds of the namespace's: see search_counts).
CYPHER 25
CALL () {
  UNWIND CASE WHEN $fact_k > 0 THEN [1] ELSE [] END AS go
  MATCH (node:Fact)
    SEARCH node IN (VECTOR INDEX fact_embedding FOR $vector WHERE node.ns = $ns LIMIT $fact_k)
    SCORE AS score
  RETURN 'fact_embedding' AS index, node.id AS id, score
  UNION ALL
  UNWIND CASE WHEN $episode_k > 0 THEN [1] ELSE [] END AS go
  MATCH (node:Episode)
    SEARCH node IN (VECTOR INDEX episode_embedding FOR $vector
                    WHERE node.ns = $ns LIMIT $episode_k)
    SCORE AS score
  RETURN 'episode_embedding' AS index, node.id AS id, score
}
RETURN index, id, score
