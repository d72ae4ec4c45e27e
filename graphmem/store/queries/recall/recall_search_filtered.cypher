// name: recall_search_filtered
// mode: read
// params: ns, vector, query, candidates, pool, facts, episodes, use_vector, use_fulltext, next_message, statuses, fact_cap, episode_cap, filtered, keep_superseded, as_of, valid_at, include_retired, tags, since, until, speakers, schema_key
// returns: schema_state, fact_path, episode_path, fv_fetched, fv_hits, ff_fetched, ff_hits, ev_fetched, ev_hits, ef_fetched, ef_hits, fact_briefs, episode_briefs, fact_nodes, episode_nodes
// recall_search where the vector indexes filter inside the index (Cypher 25's SEARCH, Neo4j
// 2026.01+; $filtered is true): a namespace past its cap is read through SEARCH, asking for
// $candidates entries of the namespace alone and, for facts, only of the $statuses the search
// can show (those that are believed or stand for what replaced them; every status when it
// looks back in time or at retired facts), so a small namespace beside large ones finds its
// own nearest entries in the first read. SEARCH only runs where the count found more entries
// than the cap, and the cap is at least $candidates: it never asks for more entries than its
// filter matches, which Neo4j 2026.09 can fail with an internal "Index ... out of bounds" error
// once the index has been written to in many transactions. A namespace within its cap is
// scored exactly (fact_path, episode_path say which path each kind took); everything else is
// recall_search's.
CYPHER 25
{{recall_search_state}}
{{recall_vector_exact}}
CALL (has_facts, fact_count) {
  UNWIND CASE WHEN has_facts AND $use_vector AND fact_count > $fact_cap
              THEN [1] ELSE [] END AS go
  MATCH (node:Fact)
    SEARCH node IN (VECTOR INDEX fact_embedding FOR $vector
                    WHERE node.ns = $ns AND node.status IN $statuses LIMIT $candidates)
    SCORE AS score
  WITH count(*) AS fetched, collect({{fact_candidate}}) AS found
  RETURN fetched AS fx_fetched, found AS fx_found
}
CALL (has_episodes, episode_count) {
  UNWIND CASE WHEN has_episodes AND $use_vector AND episode_count > $episode_cap
              THEN [1] ELSE [] END AS go
  MATCH (node:Episode)
    SEARCH node IN (VECTOR INDEX episode_embedding FOR $vector
                    WHERE node.ns = $ns LIMIT $candidates)
    SCORE AS score
  WITH count(*) AS fetched,
       collect(CASE WHEN {{episode_visible}} THEN {node: node, score: score} END) AS visible
  RETURN fetched AS ex_fetched, visible[..$pool] AS ex
}
{{recall_vector_paths}}
{{recall_search_rest}}
