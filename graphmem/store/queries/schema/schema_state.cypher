// name: schema_state
// mode: read
// params: key
// returns: embedder_model, embedding_dimension, created_at, reembedding_model, reembedding_dimension, reembedding_started_at, reembedding_heartbeat, erasure_key
// The embedder the graph was built with, recorded when the schema was first applied, and the
// one a re-embedding that has not finished is moving it to (null when none is under way),
// with when its run last wrote (null once the run stopped), and the graph's erasure key
// (null until the schema is applied or something is forgotten).
MATCH (s:GraphmemSchema {key: $key})
RETURN s.embedder_model AS embedder_model,
       s.embedding_dimension AS embedding_dimension,
       s.created_at AS created_at,
       s.reembedding_model AS reembedding_model,
       s.reembedding_dimension AS reembedding_dimension,
       s.reembedding_started_at AS reembedding_started_at,
       s.reembedding_heartbeat AS reembedding_heartbeat,
       s.erasure_key AS erasure_key
