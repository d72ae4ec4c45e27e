// name: consolidate_gate_read
// mode: read
// params: ns
// returns: lock_run, lock_expires_at, watermark, last_finished_at, now, recent, failures
// The namespace's consolidation state (none yet: every answer null or empty): its lock,
// watermark and last run's end, the facts after the watermark that a run handled (recent),
// and the new facts whose cluster's proposal was unusable, once per such run (failures).
OPTIONAL MATCH (s:ConsolidationState {ns: $ns})
WITH s, datetime.statement() AS now
RETURN s.lock_run AS lock_run, s.lock_expires_at AS lock_expires_at, s.watermark AS watermark,
       s.last_finished_at AS last_finished_at, now,
       coalesce(s.recent, []) AS recent, coalesce(s.failures, []) AS failures

