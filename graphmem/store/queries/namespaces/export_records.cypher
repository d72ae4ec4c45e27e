// name: export_records
// mode: read
// params: ns, after, page: integer, content: boolean, vectors: boolean, edges: boolean
// returns: key, eid, labels, properties, typed, edges
// One page of a namespace export: up to $page consolidation records of namespace $ns from
// key $after on (run, then clusters), in key order: no index holds that order, so each page
// sorts the namespace's records (a few per run).
MATCH (n:ConsolidationRecord)
WHERE n.ns = $ns
WITH n, {{export_key(n)}} AS key
WHERE key >= $after
WITH n
ORDER BY key
LIMIT $page
RETURN {{exported_node(n)}}
ORDER BY key
