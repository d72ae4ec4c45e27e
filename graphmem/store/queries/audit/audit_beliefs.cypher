// name: audit_beliefs
// mode: read
// params: ns, as_of, valid_at, include_retired, tags, since, until, limit
// returns: fact
// The facts recall would consider for these two clocks (fact_visible): believed at $as_of
// (now, by the database's clock, when null) and, with $valid_at, true then as believed at
// $as_of; newest first, at most $limit. The (ns, recorded_at) index bounds the scan.
// $include_retired, $tags, $since and $until are recall's other filters (an audit passes
// false and nulls).
MATCH (node:Fact {ns: $ns})
WHERE node.recorded_at <= coalesce($as_of, datetime.statement()) AND {{fact_visible}}
RETURN {{fact_map}} AS fact
ORDER BY node.recorded_at DESC, node.id
LIMIT $limit
