// name: export_states
// mode: read
// params: ns, after, page: integer, content: boolean, vectors: boolean, edges: boolean
// returns: key, eid, labels, properties, typed, edges
// The namespace's consolidation state (one at most, key 'state') for a namespace export.
MATCH (n:ConsolidationState)
WHERE n.ns = $ns AND 'state' >= $after
WITH n
LIMIT $page
RETURN {{exported_node(n)}}
ORDER BY key
