// name: request_get
// mode: read
// params: ns, key
// returns: route, body_hash, status, result, at
// The first answer recorded for a write request of namespace $ns by its idempotency key (the
// lock node keyed $key, 'request:<ns>:<idempotency key>', labelled :GraphmemRequest once an
// answer is recorded); no row when none is.
MATCH (r:GraphmemLock {key: $key})
WHERE r.ns = $ns AND r:GraphmemRequest
RETURN r.route AS route, r.body_hash AS body_hash, r.status AS status, r.result AS result,
       r.recorded_at AS at
