// name: export_facts
// mode: read
// params: ns, after, page: integer, content: boolean, vectors: boolean, edges: boolean
// returns: key, eid, labels, properties, typed, edges
// One page of a namespace export: up to $page facts of namespace $ns from id $after on,
// in id order (the fact_ns_id index gives it: ordered by ns too, the planner reads it in
// order and stops at the page), as exported_node describes them.
MATCH (n:Fact)
WHERE n.ns = $ns AND n.id >= $after
WITH n
ORDER BY n.ns, n.id
LIMIT $page
RETURN {{exported_node(n)}}
ORDER BY key
