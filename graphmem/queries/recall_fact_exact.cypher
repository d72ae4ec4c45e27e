// name: recall_fact_exact
// mode: read
// params: ns, vector, pool, as_of, valid_at, include_retired, tags, since, until
// returns: id, score, brief
// Exact cosine scoring over every visible fact of the namespace: the fallback when the
// filters hide most of what the vector index returns (for example an old $as_of).
MATCH (node:Fact {ns: $ns})
WHERE {{fact_visible}}
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
RETURN node.id AS id, score,
       {id: node.id, text: node.text, at: node.recorded_at.epochMillis, similarity: score} AS brief
ORDER BY score DESC
LIMIT $pool
