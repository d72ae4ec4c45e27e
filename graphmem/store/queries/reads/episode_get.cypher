// name: episode_get
// mode: read
// params: ns, ids
// returns: episode
// The episodes with these ids in the namespace.
UNWIND $ids AS id
MATCH (node:Episode {id: id})
WHERE node.ns = $ns
RETURN {{episode_map}} AS episode
