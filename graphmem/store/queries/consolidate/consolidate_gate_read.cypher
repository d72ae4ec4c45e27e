// name: consolidate_gate_read
// mode: read
// params: ns, min_new
// returns: lock_run, lock_expires_at, watermark, last_finished_at, now, new_facts, recent, failures
// consolidate_gate for a dry run: the same answers, nothing created or locked.
OPTIONAL MATCH (s:ConsolidationState {ns: $ns})
WITH s, datetime.statement() AS now
RETURN s.lock_run AS lock_run, s.lock_expires_at AS lock_expires_at, s.watermark AS watermark,
       s.last_finished_at AS last_finished_at, now,
       coalesce(s.recent, []) AS recent, coalesce(s.failures, []) AS failures,
       size(COLLECT {
         MATCH (f:Fact)
         WHERE f.ns = $ns AND f.recorded_at > coalesce(s.watermark, datetime('0001-01-01T00:00:00Z'))
           AND f.retired_at IS NULL AND NOT f.id IN coalesce(s.recent, [])
         RETURN f LIMIT $min_new
       }) AS new_facts
