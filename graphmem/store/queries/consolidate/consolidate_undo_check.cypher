// name: consolidate_undo_check
// mode: write
// params: ns, run
// returns: status, started_at, lock_run, lock_expires_at, now, changes, later, resolved_later
// What undoing run $run needs to know, with the namespace's consolidation state and the
// run's facts write-locked: the run's status, each fact it changed as it was before, as the
// run left it and as it is now (null: gone), the later runs (not undone) that changed one of
// them, and the contradictions the run opened that another actor resolved since.
MATCH (r:ConsolidationRun {id: $run})
WHERE r.ns = $ns
MATCH (s:ConsolidationState {ns: $ns})
SET s.graphmem_lock = true
REMOVE s.graphmem_lock
WITH r, s
CALL (r) {
  MATCH (c:ConsolidationChange {ns: $ns, run: $run})
  OPTIONAL MATCH (f:Fact {id: c.fact_id})
  WHERE f.ns = $ns
  FOREACH (_ IN CASE WHEN f IS NULL THEN [] ELSE [1] END |
    SET f.graphmem_lock = true REMOVE f.graphmem_lock)
  RETURN collect({
    fact_id: c.fact_id,
    before: [c.before_status, c.before_retired_at, c.before_valid_to, c.before_stated_valid_to,
             c.before_superseded_by, c.before_pinned, c.before_retraction_reason,
             c.before_retracted_by, c.before_valid_from, c.before_valid_from_set_at,
             c.before_tier, c.before_tier_at, c.before_tier_by],
    // A tier move kept only the tier fields: the others are as they are now.
    after: CASE WHEN c.kind = 'tier' AND f IS NOT NULL THEN
             [f.status, f.retired_at, f.valid_to, f.stated_valid_to, f.superseded_by, f.pinned,
              f.retraction_reason, f.retracted_by, f.valid_from, f.valid_from_set_at,
              c.after_tier, c.after_tier_at, c.after_tier_by]
           ELSE
             [c.after_status, c.after_retired_at, c.after_valid_to, c.after_stated_valid_to,
              c.after_superseded_by, c.after_pinned, c.after_retraction_reason,
              c.after_retracted_by, c.after_valid_from, c.after_valid_from_set_at,
              c.after_tier, c.after_tier_at, c.after_tier_by] END,
    now: CASE WHEN f IS NULL THEN null ELSE
           [f.status, f.retired_at, f.valid_to, f.stated_valid_to, f.superseded_by, f.pinned,
            f.retraction_reason, f.retracted_by, f.valid_from, f.valid_from_set_at, f.tier,
            f.tier_at, f.tier_by] END
  }) AS changes,
  collect(c.fact_id) AS ids
}
CALL (r, ids) {
  MATCH (c:ConsolidationChange {ns: $ns})
  WHERE c.fact_id IN ids AND c.run <> $run AND c.at > r.started_at
  MATCH (other:ConsolidationRun {id: c.run})
  WHERE other.ns = $ns AND other.status <> 'undone'
  RETURN collect(DISTINCT other.id) AS later
}
CALL (r) {
  MATCH (a:Fact)-[x:CONTRADICTS {actor: $run}]->(b:Fact)
  WHERE a.ns = $ns AND x.resolved_at IS NOT NULL AND x.resolved_by <> $run
  RETURN collect(a.id + ' / ' + b.id) AS resolved_later
}
RETURN r.status AS status, r.started_at AS started_at, s.lock_run AS lock_run,
       s.lock_expires_at AS lock_expires_at, datetime.statement() AS now, changes, later,
       resolved_later
