// name: recall_episode_exact
// mode: read
// params: ns, vector, pool, as_of, valid_at, since, until
// returns: id, score
// Exact cosine scoring over every visible episode of the namespace: the fallback when the
// filters hide most of what the vector index returns (for example an old $as_of).
MATCH (node:Episode {ns: $ns})
WHERE {{episode_visible}}
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
RETURN node.id AS id, score
ORDER BY score DESC
LIMIT $pool
