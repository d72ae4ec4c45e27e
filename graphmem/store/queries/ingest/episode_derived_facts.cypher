// name: episode_derived_facts
// mode: read
// params: ns, ids
// returns: fact
// The facts of the namespace derived from the episodes with these ids (a retried ingest's
// answer, rebuilt from what its first run stored), oldest first.
MATCH (node:Fact)-[:DERIVED_FROM]->(e:Episode)
WHERE e.ns = $ns AND e.id IN $ids AND node.ns = $ns
WITH DISTINCT node
ORDER BY node.recorded_at, node.id
RETURN {{fact_map}} AS fact
