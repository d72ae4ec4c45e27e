// name: audit_contradictions
// mode: read
// params: ns, open_only, limit
// returns: contradiction
// The namespace's CONTRADICTS edges, oldest first, at most $limit: with $open_only, the open
// ones as recall marks them (unresolved, both facts believed: not one whose side was
// superseded, merged, retracted or forgotten since, nor the duplicate's edge a merge carried to
// its survivor); otherwise every one, settled, moot or open.
MATCH (a:Fact|Tombstone {ns: $ns})-[c:CONTRADICTS]->(b:Fact|Tombstone {ns: $ns})
WHERE NOT $open_only
   OR (c.resolved_at IS NULL AND a:Fact AND b:Fact AND a.retired_at IS NULL
       AND b.retired_at IS NULL)
RETURN {{contradiction_map(a, c, b)}} AS contradiction
ORDER BY c.at, contradiction.a, contradiction.b
LIMIT $limit
