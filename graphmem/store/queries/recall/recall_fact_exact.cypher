// name: recall_fact_exact
// mode: read
// params: ns, vector, pool, keep_superseded, as_of, valid_at, include_retired, tags, since, until
// returns: id, score, head, head_at, head_use, head_valid, brief
// Exact cosine scoring over the namespace: the fallback when the filters hide most of what
// the vector index returns (for example an old $as_of, or a small namespace beside large ones
// in the shared index). The best $pool visible facts, and the best $pool superseded ones that
// recall may not return themselves, each standing for the fact that replaced it (its `head`,
// as in recall_search), so that the fallback finds an update through what it replaced too.
CALL () {
  MATCH (node:Fact {ns: $ns})
  WHERE {{fact_visible}}
  WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
  ORDER BY score DESC
  LIMIT $pool
  RETURN collect({node: node, score: score, head: null}) AS visible
}
CALL () {
  MATCH (node:Fact {ns: $ns})
  WHERE node.superseded_by IS NOT NULL AND NOT coalesce({{fact_visible}}, false)
  WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
  ORDER BY score DESC
  LIMIT $pool
  RETURN collect({node: node, score: score, superseded: true}) AS superseded
}
CALL (visible, superseded) {
  UNWIND visible + superseded AS candidate
  WITH candidate
  ORDER BY candidate.score DESC
  RETURN collect(candidate) AS found
}
UNWIND {{fact_successors}} AS hit
RETURN hit.node.id AS id, hit.score AS score, hit.head.id AS head,
       hit.head.recorded_at.epochMillis AS head_at, {{fact_use(hit.head)}} AS head_use,
       {{fact_valid_time(hit.head)}} AS head_valid,
       {id: hit.node.id, text: hit.node.text, at: hit.node.recorded_at.epochMillis,
        similarity: hit.score, use: {{fact_use(hit.node)}}, status: hit.node.status,
        valid: {{fact_valid_time(hit.node)}}} AS brief
