// name: consolidate_gate
// mode: write
// params: ns, min_new
// returns: lock_run, lock_expires_at, watermark, last_finished_at, now, new_facts, recent, failures
// The namespace's consolidation state, created when missing and write-locked for the rest of
// the transaction (two runs that start at once are serialised here), with how many believed
// facts were recorded since its watermark and not handled yet (counted up to $min_new), the
// facts after the watermark that a run handled (recent), and the new facts whose cluster's
// proposal was unusable, once per such run (failures).
MERGE (s:ConsolidationState {ns: $ns})
SET s.graphmem_lock = true
REMOVE s.graphmem_lock
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
