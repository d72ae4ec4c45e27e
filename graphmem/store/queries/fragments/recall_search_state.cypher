// Recall's search, first part: the graph's embedder as recorded (schema_state), and whether
// the namespace holds facts and episodes to search (none while the graph is re-embedded or
// its vectors have another dimension than $vector).
OPTIONAL MATCH (schema:GraphmemSchema {key: $schema_key})
WITH schema {.embedder_model, .embedding_dimension, .reembedding_model, .reembedding_dimension,
             .reembedding_started_at} AS schema_state,
     schema IS NULL OR (schema.reembedding_model IS NULL
                        AND schema.embedding_dimension = size($vector)) AS usable
WITH schema_state,
     usable AND EXISTS { MATCH (f:Fact {ns: $ns}) } AS has_facts,
     usable AND EXISTS { MATCH (e:Episode {ns: $ns}) } AS has_episodes
