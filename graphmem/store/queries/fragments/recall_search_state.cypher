// Recall's search, first part: the graph's embedder as recorded (schema_state), and how many
// entries of the namespace the vector indexes hold for the search, each counted up to one past
// its cap (fact_count: facts of the $statuses, up to $fact_cap + 1; episode_count: episodes,
// up to $episode_cap + 1), so that a namespace within its cap is scored exactly and a filtered
// vector read never asks for more entries than the index holds of it. Nothing is counted, so
// nothing is searched, while the graph is re-embedded or its vectors have another dimension
// than $vector.
OPTIONAL MATCH (schema:GraphmemSchema {key: $schema_key})
WITH schema {.embedder_model, .embedding_dimension, .reembedding_model, .reembedding_dimension,
             .reembedding_started_at} AS schema_state,
     schema IS NULL OR (schema.reembedding_model IS NULL
                        AND schema.embedding_dimension = size($vector)) AS usable
WITH schema_state,
     CASE WHEN usable AND $facts THEN size(COLLECT {
       MATCH (f:Fact)
       WHERE f.ns = $ns AND f.status IN $statuses AND f.embedding IS NOT NULL
       RETURN 1 LIMIT $fact_cap + 1
     }) ELSE 0 END AS fact_count,
     CASE WHEN usable AND $episodes THEN size(COLLECT {
       MATCH (e:Episode)
       WHERE e.ns = $ns AND e.embedding IS NOT NULL
       RETURN 1 LIMIT $episode_cap + 1
     }) ELSE 0 END AS episode_count
WITH schema_state, fact_count, episode_count,
     fact_count > 0 AS has_facts, episode_count > 0 AS has_episodes
