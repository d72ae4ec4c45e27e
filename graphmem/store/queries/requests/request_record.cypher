// name: request_record
// mode: write
// params: ns, key, route, body_hash, status, result, before
// returns: route, body_hash, status, result, at
// Records the answer of a write request of namespace $ns under its idempotency key (the lock
// node keyed $key, which the write's own transactions lock too), unless an answer recorded
// after $before is there already: then that first answer stays. Returns the record kept.
MERGE (r:GraphmemLock {key: $key})
  ON CREATE SET r.ns = $ns
WITH r
WHERE r.ns = $ns
CALL (r) {
  WITH r
  WHERE r.recorded_at IS NULL OR r.recorded_at < $before
  SET r:GraphmemRequest, r.route = $route, r.body_hash = $body_hash, r.status = $status,
      r.result = $result, r.recorded_at = datetime.transaction()
}
SET r.at = datetime.transaction()
RETURN r.route AS route, r.body_hash AS body_hash, r.status AS status, r.result AS result,
       r.recorded_at AS at
