// Recall's vector reads where the namespace holds no more entries than its cap: every one of
// them scored exactly (vector.similarity.cosine, on the index's (1 + cos) / 2 scale), the best
// $candidates of each kind kept, as an index read would return them (fe_*, ee_*).
CALL (has_facts, fact_count) {
  UNWIND CASE WHEN has_facts AND $use_vector AND fact_count <= $fact_cap
              THEN [1] ELSE [] END AS go
  MATCH (node:Fact)
  WHERE node.ns = $ns AND node.status IN $statuses AND node.embedding IS NOT NULL
  WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
  ORDER BY score DESC
  LIMIT $candidates
  WITH count(*) AS fetched, collect({{fact_candidate}}) AS found
  RETURN fetched AS fe_fetched, found AS fe_found
}
CALL (has_episodes, episode_count) {
  UNWIND CASE WHEN has_episodes AND $use_vector AND episode_count <= $episode_cap
              THEN [1] ELSE [] END AS go
  MATCH (node:Episode)
  WHERE node.ns = $ns AND node.embedding IS NOT NULL
  WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
  ORDER BY score DESC
  LIMIT $candidates
  WITH count(*) AS fetched,
       collect(CASE WHEN {{episode_visible}} THEN {node: node, score: score} END) AS visible
  RETURN fetched AS ee_fetched, visible[..$pool] AS ee
}
