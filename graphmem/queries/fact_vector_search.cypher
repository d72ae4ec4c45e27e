// name: fact_vector_search
// mode: read
// params: ns, vector, candidates, k
// returns: id, text, status, score
// Nearest active facts of one namespace through the vector index. The index cannot filter,
// so it is asked for $candidates neighbours and the namespace filter runs after.
CALL db.index.vector.queryNodes('fact_embedding', $candidates, $vector)
YIELD node, score
WHERE node.ns = $ns AND node.status = 'active'
RETURN node.id AS id, node.text AS text, node.status AS status, score
ORDER BY score DESC
LIMIT $k
