// name: export_episodes
// mode: read
// params: ns, after, page: integer, content: boolean, vectors: boolean, edges: boolean
// returns: key, eid, labels, properties, typed, edges
// One page of a namespace export: up to $page episodes of namespace $ns from id $after on,
// in id order (the episode_ns_id index gives it).
MATCH (n:Episode)
WHERE n.ns = $ns AND n.id >= $after
WITH n
ORDER BY n.ns, n.id
LIMIT $page
RETURN {{exported_node(n)}}
ORDER BY key
