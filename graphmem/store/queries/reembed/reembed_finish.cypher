// name: reembed_finish
// mode: write
// params: key, model, dimension, token
// returns: embedder_model, embedding_dimension
// Records $model ($dimension-d) as the graph's embedder and ends the re-embedding to it, if
// the run $token still holds it.
MATCH (s:GraphmemSchema {key: $key})
WHERE s.reembedding_model = $model AND s.reembedding_dimension = $dimension
  AND s.reembedding_token = $token
SET s.embedder_model = $model,
    s.embedding_dimension = $dimension,
    s.reembedded_at = datetime()
REMOVE s.reembedding_model, s.reembedding_dimension, s.reembedding_started_at,
       s.reembedding_cursor, s.reembedding_token, s.reembedding_heartbeat
RETURN s.embedder_model AS embedder_model, s.embedding_dimension AS embedding_dimension
