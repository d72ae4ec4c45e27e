// name: reembed_claim
// mode: write
// params: key, model, dimension
// returns: embedder_model, embedding_dimension, reembedding_model, reembedding_dimension, started_at, cursor
// Marks the graph as being re-embedded with $model ($dimension-d), unless a re-embedding to
// another model is under way; a re-embedding to the same model keeps its start and its
// cursor, so that it resumes. Returns the schema node as it is then: the caller goes on only
// if the re-embedding recorded is its own.
MATCH (s:GraphmemSchema {key: $key})
FOREACH (_ IN CASE WHEN s.reembedding_model IS NULL THEN [1] ELSE [] END |
  SET s.reembedding_model = $model,
      s.reembedding_dimension = $dimension,
      s.reembedding_started_at = datetime(),
      s.reembedding_cursor = null)
RETURN s.embedder_model AS embedder_model, s.embedding_dimension AS embedding_dimension,
       s.reembedding_model AS reembedding_model,
       s.reembedding_dimension AS reembedding_dimension,
       s.reembedding_started_at AS started_at, s.reembedding_cursor AS cursor
