// name: verify_vectors_filtered
// mode: read
// params: ns, vector, k
// returns: index, id, score
// verify_vectors where the vector indexes filter inside the index (Cypher 25's SEARCH, Neo4j
// 2026.01+): the $k facts and episodes of the namespace itself nearest to $vector.
CYPHER 25
CALL () {
  MATCH (node:Fact)
    SEARCH node IN (VECTOR INDEX fact_embedding FOR $vector WHERE node.ns = $ns LIMIT $k)
    SCORE AS score
  RETURN 'fact_embedding' AS index, node.id AS id, score
  UNION ALL
  MATCH (node:Episode)
    SEARCH node IN (VECTOR INDEX episode_embedding FOR $vector WHERE node.ns = $ns LIMIT $k)
    SCORE AS score
  RETURN 'episode_embedding' AS index, node.id AS id, score
}
RETURN index, id, score
