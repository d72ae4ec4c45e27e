// name: schema_state
// mode: read
// params: key
// returns: embedder_model, embedding_dimension, created_at
// The embedder the graph was built with, recorded when the schema was first applied.
MATCH (s:GraphmemSchema {key: $key})
RETURN s.embedder_model AS embedder_model,
       s.embedding_dimension AS embedding_dimension,
       s.created_at AS created_at
