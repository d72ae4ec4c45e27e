// name: schema_state_claim
// mode: write
// params: key, model, dimension
// returns: embedder_model, embedding_dimension
// Records the embedder on first use and returns whichever embedder the graph holds, so a
// caller with another one can refuse to go on. Also gives the graph its erasure key (random,
// once, under the node's lock so that two first connections agree): tombstones hash the text
// they replaced with it (graphmem.core.forget.hashing).
MERGE (s:GraphmemSchema {key: $key})
  ON CREATE SET s.embedder_model = $model,
                s.embedding_dimension = $dimension,
                s.created_at = datetime()
WITH s
CALL (s) {
  WITH s
  WHERE s.erasure_key IS NULL
  SET s.graphmem_lock = true
  REMOVE s.graphmem_lock
  WITH s
  SET s.erasure_key = coalesce(s.erasure_key, randomUUID() + randomUUID())
  RETURN count(s) AS made
}
RETURN s.embedder_model AS embedder_model, s.embedding_dimension AS embedding_dimension
