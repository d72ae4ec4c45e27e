// name: summary_candidates
// mode: read
// params: ns, scan
// returns: fact, embedding
// What the summary pass clusters: the $scan newest believed facts of the namespace that are
// neither a summary nor a member of a believed one, with their embeddings.
MATCH (f:Fact {ns: $ns})
WHERE f.retired_at IS NULL
  AND NOT EXISTS { MATCH (f)-[:SUMMARIZES]->(:Fact) }
  AND NOT EXISTS {
    MATCH (s:Fact)-[:SUMMARIZES]->(f)
    WHERE s.ns = $ns AND s.retired_at IS NULL
  }
WITH f
ORDER BY f.recorded_at DESC, f.id
LIMIT $scan
RETURN f {.id, .ns, .text, .status, .recorded_at, .valid_from, .valid_to, .source} AS fact,
       f.embedding AS embedding
