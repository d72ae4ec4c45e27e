// name: schema_state_claim
// mode: write
// params: key, model, dimension
// returns: embedder_model, embedding_dimension
// Records the embedder on first use and returns whichever embedder the graph holds, so a
// caller with another one can refuse to go on. Also gives the graph its erasure key (random,
// once): tombstones hash the text they replaced with it (graphmem.core.forget.hashing).
MERGE (s:GraphmemSchema {key: $key})
  ON CREATE SET s.embedder_model = $model,
                s.embedding_dimension = $dimension,
                s.created_at = datetime()
SET s.erasure_key = coalesce(s.erasure_key, randomUUID() + randomUUID())
RETURN s.embedder_model AS embedder_model, s.embedding_dimension AS embedding_dimension
