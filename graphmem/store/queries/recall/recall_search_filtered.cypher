// name: recall_search_filtered
// mode: read
// params: ns, vector, query, candidates, pool, facts, episodes, use_vector, use_fulltext, next_message, statuses, fact_limit, episode_limit, keep_superseded, as_of, valid_at, include_retired, tags, since, until, speakers, schema_key
// returns: schema_state, fv_fetched, fv_hits, ff_fetched, ff_hits, ev_fetched, ev_hits, ef_fetched, ef_hits, fact_briefs, episode_briefs, fact_nodes, episode_nodes
// recall_search where the vector indexes filter inside the index (Cypher 25's SEARCH, Neo4j
// 2026.01+): each vector read asks for $candidates entries of the namespace alone, and for
// facts only of the $statuses the search can show (those that are believed or stand for
// what replaced them; every status when it looks back in time or at retired facts), so a
// small namespace beside large ones finds its own nearest entries in the first read. It asks
// for no more than the index holds of them ($fact_limit and $episode_limit, from
// search_counts): the index then returns all of them. Everything else is recall_search's.
CYPHER 25
{{recall_search_state}}
CALL (has_facts) {
  UNWIND CASE WHEN has_facts AND $facts AND $use_vector AND $fact_limit > 0
              THEN [1] ELSE [] END AS go
  MATCH (node:Fact)
    SEARCH node IN (VECTOR INDEX fact_embedding FOR $vector
                    WHERE node.ns = $ns AND node.status IN $statuses LIMIT $fact_limit)
    SCORE AS score
  WITH count(*) AS fetched, collect({{fact_candidate}}) AS found
  RETURN fetched AS fv_fetched, found AS fv_found
}
CALL (has_episodes) {
  UNWIND CASE WHEN has_episodes AND $episodes AND $use_vector AND $episode_limit > 0
              THEN [1] ELSE [] END AS go
  MATCH (node:Episode)
    SEARCH node IN (VECTOR INDEX episode_embedding FOR $vector
                    WHERE node.ns = $ns LIMIT $episode_limit)
    SCORE AS score
  WITH count(*) AS fetched,
       collect(CASE WHEN {{episode_visible}} THEN {node: node, score: score} END) AS visible
  RETURN fetched AS ev_fetched, visible[..$pool] AS ev
}
{{recall_search_rest}}
