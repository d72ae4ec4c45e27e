// name: episode_unextracted
// mode: read
// params: ns, ids, extractor
// returns: episode
// The episodes among $ids that the extractor $extractor has not read yet.
UNWIND $ids AS id
MATCH (node:Episode {id: id})
WHERE node.ns = $ns AND NOT $extractor IN coalesce(node.extracted_by, [])
RETURN {{episode_map}} AS episode
