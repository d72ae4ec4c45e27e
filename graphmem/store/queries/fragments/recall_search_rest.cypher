// Recall's search, after the vector reads (fv_found, ev): the fulltext reads, superseded
// candidates paired with their successors, every kept candidate's brief (a fact's with what
// its importance score reads, fact_use, and its valid time, fact_valid_time, as is each
// successor's; an episode's with the next message of its session), and the row
// recall_search and recall_search_filtered return.
CALL (has_facts) {
  UNWIND CASE WHEN has_facts AND $facts AND $use_fulltext AND $query IS NOT NULL
              THEN [1] ELSE [] END AS go
  CALL db.index.fulltext.queryNodes('fact_text', {{fulltext_in_ns('text', $query)}},
                                    {limit: $candidates})
  YIELD node, score WHERE score > 0
  WITH count(*) AS fetched, collect({{fact_candidate}}) AS found
  RETURN fetched AS ff_fetched, found AS ff_found
}
CALL (fv_found) {
  WITH fv_found AS found
  RETURN {{fact_successors}} AS fv
}
CALL (ff_found) {
  WITH ff_found AS found
  RETURN {{fact_successors}} AS ff
}
CALL (has_episodes) {
  UNWIND CASE WHEN has_episodes AND $episodes AND $use_fulltext AND $query IS NOT NULL
              THEN [1] ELSE [] END AS go
  CALL db.index.fulltext.queryNodes('episode_content',
                                    {{fulltext_either_in_ns('content', 'speaker', $query)}},
                                    {limit: $candidates})
  YIELD node, score WHERE score > 0
  WITH count(*) AS fetched,
       collect(CASE WHEN {{episode_visible}} THEN {node: node, score: score} END) AS visible
  RETURN fetched AS ef_fetched, visible[..$pool] AS ef
}
CALL (fv, ff) {
  UNWIND fv + ff AS hit
  WITH DISTINCT hit.node AS node
  RETURN collect({id: node.id, text: node.text, at: node.recorded_at.epochMillis,
                  similarity: vector.similarity.cosine(node.embedding, $vector),
                  use: {{fact_use(node)}}, status: node.status,
                  valid: {{fact_valid_time(node)}}}) AS fact_briefs
}
CALL (ev, ef) {
  UNWIND ev + ef AS hit
  WITH DISTINCT hit.node AS node
  RETURN collect({id: node.id, text: node.content, speaker: node.speaker, role: node.role,
                  at: coalesce(node.occurred_at, node.recorded_at).epochMillis,
                  similarity: vector.similarity.cosine(node.embedding, $vector),
                  next: CASE WHEN $next_message AND node.session_id IS NOT NULL
                                  AND node.occurred_at IS NOT NULL
                        THEN head(COLLECT {
                          // One seek of episode_ns_session_occurred_at, in its order.
                          MATCH (later:Episode)
                          WHERE later.ns = $ns AND later.session_id = node.session_id
                                AND later.occurred_at > node.occurred_at
                          RETURN later.id
                          ORDER BY later.ns, later.session_id, later.occurred_at LIMIT 1
                        }) END})
         AS episode_briefs
}
RETURN schema_state, fact_path, episode_path, fv_fetched, [h IN fv | {id: h.node.id, score: h.score, head: h.head.id,
                               head_at: h.head.recorded_at.epochMillis,
                               head_use: {{fact_use(h.head)}},
                               head_valid: {{fact_valid_time(h.head)}}}] AS fv_hits,
       ff_fetched, [h IN ff | {id: h.node.id, score: h.score, head: h.head.id,
                               head_at: h.head.recorded_at.epochMillis,
                               head_use: {{fact_use(h.head)}},
                               head_valid: {{fact_valid_time(h.head)}}}] AS ff_hits,
       ev_fetched, [h IN ev | {id: h.node.id, score: h.score}] AS ev_hits,
       ef_fetched, [h IN ef | {id: h.node.id, score: h.score}] AS ef_hits,
       fact_briefs, episode_briefs,
       CASE WHEN has_facts THEN COUNT { MATCH (:Fact) } ELSE 0 END AS fact_nodes,
       CASE WHEN has_episodes THEN COUNT { MATCH (:Episode) } ELSE 0 END AS episode_nodes
