// name: ns_lock
// mode: write
// params: key, ns
// returns: key
// Serialises one kind of write within a namespace (for example de-duplicating ingest): the
// lock node's write lock is held until the transaction ends.
MERGE (l:GraphmemLock {key: $key})
  ON CREATE SET l.ns = $ns
SET l.at = datetime.transaction()
RETURN l.key AS key
