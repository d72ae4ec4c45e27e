// name: fact_lock
// mode: write
// params: ns, ids
// returns: locked
// Takes the write lock of each named fact for the rest of the transaction, so that checking
// and then superseding or referencing them cannot race with another writer.
MATCH (node:Fact)
WHERE node.id IN $ids AND node.ns = $ns
SET node.graphmem_lock = true
REMOVE node.graphmem_lock
RETURN count(node) AS locked
