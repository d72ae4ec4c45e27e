// name: ns_drop_locks
// mode: write
// params: ns, kinds: list<string>
// returns: kind, deleted
// Deletes namespace $ns's lock nodes (:GraphmemLock, keyed '<kind>:<ns>' or
// '<kind>:<ns>:<more>' for each kind of $kinds), found through the unique key index by prefix:
// the last step of dropping a namespace. Returns how many of each kind it deleted.
UNWIND $kinds AS kind
MATCH (l:GraphmemLock)
WHERE l.key STARTS WITH kind + ':' + $ns AND l.ns = $ns
DETACH DELETE l
RETURN kind, count(l) AS deleted
