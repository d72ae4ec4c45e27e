// name: recall_search
// mode: read
// params: ns, vector, query, candidates, pool, facts, episodes, use_vector, use_fulltext, next_message, statuses, fact_cap, episode_cap, filtered, keep_superseded, as_of, valid_at, include_retired, tags, since, until, speakers, schema_key
// returns: schema_state, fact_path, episode_path, fv_fetched, fv_hits, ff_fetched, ff_hits, ev_fetched, ev_hits, ef_fetched, ef_hits, fact_briefs, episode_briefs, fact_nodes, episode_nodes
// All of recall's index reads in one statement, on a server whose vector indexes cannot
// filter inside the index (Neo4j 5.26). For facts and episodes ($facts, $episodes), the vector
// reads ($use_vector) take one of two paths by the namespace's size, counted in this
// statement: a namespace holding at most $fact_cap facts of the $statuses ($episode_cap
// episodes) is scored exactly, its best $candidates kept; a larger one is read from the whole
// index ($candidates entries) and filtered after ($filtered is false; fact_path and
// episode_path say which path each kind took). The fulltext index ($use_fulltext, $query: escaped Lucene text) is asked for
// $candidates entries. The visible candidates (the same filters as the fallbacks) are kept, up
// to $pool per list. A superseded fact a read returns stands for the fact that replaced it
// (its `head`, believed now or at $as_of), so an update that words things differently is
// still found through what it replaced, in a widened retry too. `*_fetched` is how many a read
// returned, so the caller can tell "the index ran out" from "more may lie beyond": a fulltext
// index and an exact scan return every match up to the number asked, while a vector index's
// approximate search may return fewer than asked though it holds more (its graph loses the
// links that ran through deleted nodes), so `fact_nodes` and `episode_nodes` count what the
// vector indexes hold (every :Fact and :Episode, from the count store; 0 for a kind not
// searched).
// Every kept candidate comes with what fusion and the quality gate need: its text, time (epoch
// ms) and cosine similarity, and for an episode (with $next_message) the id of the next
// message in its session; full details are read afterwards for the few that make the cut. A
// kind the namespace holds none of is not searched at all. schema_state is the graph's
// embedder as recorded (schema_state.cypher's fields), read in the same statement, so that the
// caller can refuse results its query vector cannot be compared with; while the graph is being
// re-embedded, or when its vectors have another dimension, nothing is searched.
{{recall_search_state}}
{{recall_vector_exact}}
{{recall_vector_unfiltered}}
WITH *, fu_fetched AS fx_fetched, fu_found AS fx_found, eu_fetched AS ex_fetched, eu AS ex
{{recall_vector_paths}}
{{recall_search_rest}}
