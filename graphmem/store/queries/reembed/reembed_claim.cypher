// name: reembed_claim
// mode: write
// params: key, model, dimension, token, lease
// returns: embedder_model, embedding_dimension, reembedding_model, reembedding_dimension, started_at, cursor, token, heartbeat
// Marks the graph as being re-embedded with $model ($dimension-d) by the run $token. A
// re-embedding under way is taken over only when its run is gone (it released the claim when
// it stopped, or wrote nothing for $lease seconds): to the same model it resumes, keeping its
// start and cursor; to another one it starts again from the beginning, since every vector is
// then written again. Returns the schema node as it is then: the caller goes on only if the
// token recorded is its own. The node's write lock is taken before anything is read, so two
// runs claiming at once decide one after the other.
MATCH (s:GraphmemSchema {key: $key})
SET s.reembedding_lock = true
REMOVE s.reembedding_lock
WITH s
WITH s, s.reembedding_model IS NULL AS fresh,
     s.reembedding_heartbeat IS NULL
       OR s.reembedding_heartbeat < datetime() - duration({seconds: $lease}) AS gone
WITH s, fresh, gone,
     NOT fresh AND gone
       AND (s.reembedding_model <> $model OR s.reembedding_dimension <> $dimension) AS replaced
FOREACH (_ IN CASE WHEN fresh OR replaced THEN [1] ELSE [] END |
  SET s.reembedding_model = $model,
      s.reembedding_dimension = $dimension,
      s.reembedding_started_at = datetime(),
      s.reembedding_cursor = null)
FOREACH (_ IN CASE WHEN fresh OR gone THEN [1] ELSE [] END |
  SET s.reembedding_token = $token,
      s.reembedding_heartbeat = datetime())
RETURN s.embedder_model AS embedder_model, s.embedding_dimension AS embedding_dimension,
       s.reembedding_model AS reembedding_model,
       s.reembedding_dimension AS reembedding_dimension,
       s.reembedding_started_at AS started_at, s.reembedding_cursor AS cursor,
       s.reembedding_token AS token, s.reembedding_heartbeat AS heartbeat
