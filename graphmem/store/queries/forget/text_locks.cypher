// name: text_locks
// mode: write
// params: ns, buckets
// returns: locked
// Takes, for the rest of the transaction, the write lock of each of the namespace's text
// buckets in $buckets (sorted): a remember holds the buckets of the texts it writes from before
// it looks for their tombstones until it commits, and a forget holds every bucket while it
// erases, so that a text is either refused (the tombstone is there), or stored first and then
// seen by the erasure. The lock nodes are a bounded few per namespace (one per bucket).
UNWIND $buckets AS bucket
MERGE (l:GraphmemLock {key: 'text:' + $ns + ':' + bucket})
  ON CREATE SET l.ns = $ns
SET l.at = datetime.transaction()
RETURN count(l) AS locked
