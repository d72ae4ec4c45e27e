// name: request_prune
// mode: write
// params: ns, prefix, before, limit
// returns: deleted
// Deletes up to $limit request records and request locks of namespace $ns (lock nodes keyed
// $prefix, 'request:<ns>:') last used before $before, found through the unique key index by
// prefix.
MATCH (r:GraphmemLock)
WHERE r.key STARTS WITH $prefix AND r.ns = $ns AND r.at < $before
WITH r
LIMIT $limit
DETACH DELETE r
RETURN count(r) AS deleted
