// name: export_fact_tombstones
// mode: read
// params: ns, after, page: integer, content: boolean, vectors: boolean, edges: boolean
// returns: key, eid, labels, properties, typed, edges
// One page of a namespace export: up to $page tombstones of erased facts of namespace $ns
// from erased id $after on, in that order (the tombstone_ns_fact_id index gives it).
MATCH (n:Tombstone)
WHERE n.ns = $ns AND n.fact_id >= $after
WITH n
ORDER BY n.ns, n.fact_id
LIMIT $page
RETURN {{exported_node(n)}}
ORDER BY key
