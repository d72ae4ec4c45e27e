// name: pinned_facts
// mode: read
// params: ns, limit, as_of, valid_at, include_retired, tags, since, until
// returns: fact
// Pinned (core) facts visible under the same filters as recall, newest first.
MATCH (node:Fact {ns: $ns})
WHERE node.pinned = true AND {{fact_visible}}
RETURN {{fact_map}} AS fact
ORDER BY node.recorded_at DESC
LIMIT $limit
