// name: episode_extracted
// mode: write
// params: ns, ids, extractor
// returns: marked
// Marks the episodes $ids as read by the extractor $extractor (extracted_by), so that
// extraction runs once per message and extractor.
UNWIND $ids AS id
MATCH (node:Episode {id: id})
WHERE node.ns = $ns AND NOT $extractor IN coalesce(node.extracted_by, [])
SET node.extracted_by = coalesce(node.extracted_by, []) + $extractor
RETURN count(node) AS marked
