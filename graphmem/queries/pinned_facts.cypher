// name: pinned_facts
// mode: read
// params: ns, limit, as_of, valid_at, include_retired, tags, since, until
// returns: fact, total
// Pinned (core) facts visible under the same filters as recall, newest first (then by id, so
// the order is stable), at most $limit of them; total counts them all.
MATCH (node:Fact {ns: $ns})
WHERE node.pinned = true AND {{fact_visible}}
WITH node
ORDER BY node.recorded_at DESC, node.id
WITH collect(node) AS pinned
UNWIND pinned[..$limit] AS node
RETURN {{fact_map}} AS fact, size(pinned) AS total
