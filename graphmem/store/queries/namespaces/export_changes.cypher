// name: export_changes
// mode: read
// params: ns, after, page: integer, content: boolean, vectors: boolean, edges: boolean
// returns: key, eid, labels, properties, typed, edges
// One page of a namespace export: up to $page consolidation changes of namespace $ns from
// key $after on (run, cluster, fact), in key order: each page sorts the namespace's changes
// (one per fact a run changed), found through the consolidation_change_ns_run index.
MATCH (n:ConsolidationChange)
WHERE n.ns = $ns AND n.run IS NOT NULL
WITH n, {{export_key(n)}} AS key
WHERE key >= $after
WITH n
ORDER BY key
LIMIT $page
RETURN {{exported_node(n)}}
ORDER BY key
