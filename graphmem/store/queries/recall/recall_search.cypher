// name: recall_search
// mode: read
// params: ns, vector, query, candidates, pool, facts, episodes, use_vector, use_fulltext, next_message, keep_superseded, as_of, valid_at, include_retired, tags, since, until, speakers, schema_key
// returns: schema_state, fv_fetched, fv_hits, ff_fetched, ff_hits, ev_fetched, ev_hits, ef_fetched, ef_hits, fact_briefs, episode_briefs, fact_nodes, episode_nodes
// All of recall's index reads in one statement. For facts and episodes ($facts, $episodes),
// the vector index ($use_vector) and the fulltext index ($use_fulltext, $query: escaped Lucene
// text) are asked for $candidates entries each; the visible ones (the same filters as the
// fallbacks) are kept, up to $pool per list. A superseded fact the index returns stands for
// the fact that replaced it (its `head`, believed now or at $as_of), so an update that words
// things differently is still found through what it replaced, in a widened retry too (in a
// small namespace beside large ones, the first pass may see none of its facts). `*_fetched`
// is how many the index returned, so the caller can tell "the index ran out" from "more may
// lie beyond": a fulltext index returns every match up to the number asked, while a vector
// index's approximate search may return fewer than asked though it holds more (its graph
// loses the links that ran through deleted nodes), so `fact_nodes` and `episode_nodes`
// count what the vector indexes hold (every :Fact and :Episode, from the count store; 0 for
// a kind not searched).
// Every kept candidate comes with what fusion and the quality gate need: its
// text, time (epoch ms) and cosine similarity, and for an episode (with $next_message) the id
// of the next message in its session: the first of the namespace's next 8 messages by time
// that has its session (none when the session continues only later); full details are read
// afterwards for the few that make the cut. A kind the namespace holds none of is not searched at all. schema_state is the graph's
// embedder as recorded (schema_state.cypher's fields), read in the same statement, so that
// the caller can refuse results its query vector cannot be compared with; while the graph is
// being re-embedded, or when its vectors have another dimension, nothing is searched.
{{recall_search_state}}
CALL (has_facts) {
  UNWIND CASE WHEN has_facts AND $facts AND $use_vector THEN [1] ELSE [] END AS go
  CALL db.index.vector.queryNodes('fact_embedding', $candidates, $vector) YIELD node, score
  WITH count(*) AS fetched, collect({{fact_candidate}}) AS found
  RETURN fetched AS fv_fetched, found AS fv_found
}
CALL (has_episodes) {
  UNWIND CASE WHEN has_episodes AND $episodes AND $use_vector THEN [1] ELSE [] END AS go
  CALL db.index.vector.queryNodes('episode_embedding', $candidates, $vector) YIELD node, score
  WITH count(*) AS fetched,
       collect(CASE WHEN {{episode_visible}} THEN {node: node, score: score} END) AS visible
  RETURN fetched AS ev_fetched, visible[..$pool] AS ev
}
{{recall_search_rest}}
