// name: bench_bare_search
// mode: read
// params: ns, vector, k
// returns: id, score
// The bare filtered vector read `graphmem bench tenants` times beside recall (Neo4j 2026.01+):
// the namespace's $k nearest facts of the statuses recall shows, through Cypher 25's SEARCH
// and nothing else ($k no more than the namespace holds: see recall_search_filtered).
// graphmem itself never runs it.
CYPHER 25
MATCH (f:Fact)
  SEARCH f IN (VECTOR INDEX fact_embedding FOR $vector
               WHERE f.ns = $ns AND f.status IN ['active', 'superseded', 'merged'] LIMIT $k)
  SCORE AS score
RETURN f.id AS id, score
