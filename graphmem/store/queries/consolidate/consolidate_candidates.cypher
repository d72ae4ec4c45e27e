// name: consolidate_candidates
// mode: read
// params: ns, after, skip, limit, scan, k, floor
// returns: id, recorded_at, near, same, contradicted
// The believed facts recorded after $after (all when null) but those in $skip (handled
// already, or given up), oldest first, at most $limit, each
// with its nearest believed neighbours: up to $k from the vector index (of $scan nearest, those
// in the namespace at index score $floor or more), the believed facts with the same text hash,
// and the believed facts an open contradiction joins it to.
MATCH (f:Fact)
WHERE f.ns = $ns AND f.recorded_at > coalesce($after, datetime('0001-01-01T00:00:00Z'))
  AND f.retired_at IS NULL AND NOT f.id IN $skip
WITH f ORDER BY f.recorded_at, f.id LIMIT $limit
CALL (f) {
  CALL db.index.vector.queryNodes('fact_embedding', $scan, f.embedding) YIELD node, score
  WITH node, score
  WHERE node.ns = $ns AND node <> f AND node.retired_at IS NULL AND score >= $floor
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
