// name: request_forget
// mode: write
// params: ns, prefix
// returns: deleted
// Deletes the answers recorded for namespace $ns's write requests (lock nodes keyed $prefix,
// 'request:<ns>:', labelled :GraphmemRequest): run by every erasure, since an answer may hold
// an erased text.
MATCH (r:GraphmemLock)
WHERE r.key STARTS WITH $prefix AND r.ns = $ns AND r:GraphmemRequest
DETACH DELETE r
RETURN count(r) AS deleted
