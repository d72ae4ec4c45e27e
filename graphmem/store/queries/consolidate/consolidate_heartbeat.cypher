// name: consolidate_heartbeat
// mode: write
// params: ns, run, ttl_ms
// returns: held
// Extends run $run's lock on the namespace to now + $ttl_ms, if the run still holds it.
MATCH (s:ConsolidationState {ns: $ns})
WITH s, s.lock_run = $run AS held
SET s.lock_expires_at = CASE WHEN held
      THEN datetime.statement() + duration({milliseconds: $ttl_ms})
      ELSE s.lock_expires_at END
RETURN held
