// name: peer_graphiti_edges
// mode: read
// params: group_id
// returns: edges
// How many facts graphiti-core holds in one group_id: its RELATES_TO edges there (read by
// `graphmem bench --peer graphiti` to check that every fact was stored).
MATCH ()-[e:RELATES_TO]->()
WHERE e.group_id = $group_id
RETURN count(e) AS edges
