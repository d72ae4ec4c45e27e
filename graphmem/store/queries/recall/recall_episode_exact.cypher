// name: recall_episode_exact
// mode: read
// params: ns, vector, pool, as_of, valid_at, since, until, speakers
// returns: id, score, brief
// Exact cosine scoring over every visible episode of the namespace: the fallback when the
// filters hide most of what the vector index returns.
MATCH (node:Episode {ns: $ns})
WHERE {{episode_visible}}
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
RETURN node.id AS id, score,
       {id: node.id, text: node.content, speaker: node.speaker,
        at: coalesce(node.occurred_at, node.recorded_at).epochMillis, similarity: score} AS brief
ORDER BY score DESC
LIMIT $pool
