// name: audit_erased
// mode: read
// params: ns, kinds, as_of, since, until, limit
// returns: erased
// The namespace's tombstones of the $kinds ('fact', 'episode'): with $as_of, those believed
// then (recorded by then, neither retired nor erased by then); with $since/$until, those
// erased after $since up to $until. Oldest erasure first, at most $limit.
MATCH (node:Tombstone {ns: $ns})
WHERE node.kind IN $kinds
  AND ($as_of IS NULL
       OR (node.recorded_at <= $as_of AND coalesce(node.retired_at, node.at) > $as_of))
  AND ($since IS NULL OR node.at > $since)
  AND ($until IS NULL OR node.at <= $until)
RETURN {{tombstone_map(node)}} AS erased
ORDER BY node.at, erased.id
LIMIT $limit
