// name: verify_vectors
// mode: read
// params: ns, vector, k
// returns: index, id, score
// The $k facts and episodes of the namespace nearest to $vector (the embedding of a text the
// verification looks for), from graphmem's two vector indexes.
CALL () {
  CALL db.index.vector.queryNodes('fact_embedding', $k, $vector) YIELD node, score
  WHERE node.ns = $ns
  RETURN 'fact_embedding' AS index, node.id AS id, score
  UNION ALL
  CALL db.index.vector.queryNodes('episode_embedding', $k, $vector) YIELD node, score
  WHERE node.ns = $ns
  RETURN 'episode_embedding' AS index, node.id AS id, score
}
RETURN index, id, score
