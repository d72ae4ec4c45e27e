// name: consolidate_gate
// mode: write
// params: ns
// returns: lock_run, lock_expires_at, watermark, last_finished_at, now, recent, failures
// The namespace's consolidation state, created when missing and write-locked for the rest of
// the transaction (two runs that start at once are serialised here): its lock, watermark and
// last run's end, the facts after the watermark that a run handled (recent), and the new
// facts whose cluster's proposal was unusable, once per such run (failures).
MERGE (s:ConsolidationState {ns: $ns})
SET s.graphmem_lock = true
REMOVE s.graphmem_lock
WITH s, datetime.statement() AS now
RETURN s.lock_run AS lock_run, s.lock_expires_at AS lock_expires_at, s.watermark AS watermark,
       s.last_finished_at AS last_finished_at, now,
       coalesce(s.recent, []) AS recent, coalesce(s.failures, []) AS failures

