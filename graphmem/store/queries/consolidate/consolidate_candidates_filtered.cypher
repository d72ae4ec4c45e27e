// name: consolidate_candidates_filtered
// mode: read
// params: ns, after, skip, limit, scan, k, floor
// returns: id, recorded_at, near, same, contradicted
// consolidate_candidates where the vector index filters inside the index (Cypher 25's SEARCH,
// Neo4j 2026.01+): each fact's neighbours come from the $scan nearest believed facts of its
// own namespace (itself among them), so other namespaces' near-identical facts cannot crowd
// them out. Everything else is consolidate_candidates'.
CYPHER 25
MATCH (f:Fact)
WHERE f.ns = $ns AND f.recorded_at > coalesce($after, datetime('0001-01-01T00:00:00Z'))
  AND f.retired_at IS NULL AND NOT f.id IN $skip
WITH f ORDER BY f.recorded_at, f.id LIMIT $limit
CALL (f) {
  MATCH (node:Fact)
    SEARCH node IN (VECTOR INDEX fact_embedding FOR f.embedding
                    WHERE node.ns = $ns AND node.status = 'active' LIMIT $scan)
    SCORE AS score
  WITH node, score
  WHERE node <> f AND node.retired_at IS NULL AND score >= $floor
  RETURN collect({id: node.id, score: score})[..$k] AS near
}
CALL (f) {
  MATCH (d:Fact {ns: $ns, text_hash: f.text_hash})
  WHERE d <> f AND d.retired_at IS NULL
  RETURN collect(d.id)[..$k] AS same
}
CALL (f) {
  MATCH (f)-[c:CONTRADICTS]-(o:Fact)
  WHERE c.resolved_at IS NULL AND o.ns = $ns AND o.retired_at IS NULL
  RETURN collect(DISTINCT o.id) AS contradicted
}
RETURN f.id AS id, f.recorded_at AS recorded_at, near, same, contradicted
