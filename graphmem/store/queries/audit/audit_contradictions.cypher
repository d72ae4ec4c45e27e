// name: audit_contradictions
// mode: read
// params: ns, open_only, limit
// returns: contradiction
// The namespace's CONTRADICTS edges, the open ones only unless $open_only is false, oldest
// first, at most $limit.
MATCH (a:Fact|Tombstone {ns: $ns})-[c:CONTRADICTS]->(b:Fact|Tombstone {ns: $ns})
WHERE NOT $open_only OR c.resolved_at IS NULL
RETURN {{contradiction_map(a, c, b)}} AS contradiction
ORDER BY c.at, contradiction.a, contradiction.b
LIMIT $limit
