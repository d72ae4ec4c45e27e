// Recall's vector reads of the whole index, filtered after (fu_*, eu_*), on a server whose
// vector indexes cannot filter inside the index (Neo4j 5.26): for a namespace past its cap,
// asking for $candidates entries.
CALL (has_facts, fact_count) {
  UNWIND CASE WHEN has_facts AND $use_vector AND fact_count > $fact_cap
              THEN [1] ELSE [] END AS go
  CALL db.index.vector.queryNodes('fact_embedding', $candidates, $vector) YIELD node, score
  WITH count(*) AS fetched, collect({{fact_candidate}}) AS found
  RETURN fetched AS fu_fetched, found AS fu_found
}
CALL (has_episodes, episode_count) {
  UNWIND CASE WHEN has_episodes AND $use_vector AND episode_count > $episode_cap
              THEN [1] ELSE [] END AS go
  CALL db.index.vector.queryNodes('episode_embedding', $candidates, $vector)
  YIELD node, score
  WITH count(*) AS fetched,
       collect(CASE WHEN {{episode_visible}} THEN {node: node, score: score} END) AS visible
  RETURN fetched AS eu_fetched, visible[..$pool] AS eu
}
