// name: export_runs
// mode: read
// params: ns, after, page: integer, content: boolean, vectors: boolean, edges: boolean
// returns: key, eid, labels, properties, typed, edges
// One page of a namespace export: up to $page consolidation runs of namespace $ns from id
// $after on, in id order.
MATCH (n:ConsolidationRun)
WHERE n.ns = $ns AND n.id >= $after
WITH n
ORDER BY n.id
LIMIT $page
RETURN {{exported_node(n)}}
ORDER BY key
