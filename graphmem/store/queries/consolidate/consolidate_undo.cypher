// name: consolidate_undo
// mode: write
// params: ns, run, actor
// returns: restored, removed, reopened, flags_reopened, withdrawn, undone_at
// Undoes run $run (consolidate_undo_check found nothing built on it): each fact it changed
// gets back the state it had before the run, every edge the run made goes (its review flags
// too), each summary it wrote is retracted (a fact is never deleted), each contradiction it resolved and each review flag it closed is open again, and the run is marked undone (its record and its
// :ConsolidationChange nodes stay, for audits).
MATCH (r:ConsolidationRun {id: $run})
WHERE r.ns = $ns
CALL (r) {
  MATCH (c:ConsolidationChange {ns: $ns, run: $run})
  MATCH (f:Fact {id: c.fact_id})
  WHERE f.ns = $ns
  SET f.tier = c.before_tier, f.tier_at = c.before_tier_at, f.tier_by = c.before_tier_by
  // A tier move (kind 'tier') kept the tier fields only, all it changed.
  FOREACH (_ IN CASE WHEN c.kind IS NULL THEN [1] ELSE [] END |
    SET f.status = c.before_status, f.retired_at = c.before_retired_at,
        f.valid_to = c.before_valid_to, f.stated_valid_to = c.before_stated_valid_to,
        f.superseded_by = c.before_superseded_by, f.pinned = c.before_pinned,
        f.retraction_reason = c.before_retraction_reason,
        f.retracted_by = c.before_retracted_by, f.valid_from = c.before_valid_from,
        f.valid_from_set_at = c.before_valid_from_set_at)
  RETURN collect(DISTINCT f) AS facts
}
CALL (facts) {
  UNWIND facts AS f
  MATCH (f)-[x]-()
  WHERE x.actor = $run
  WITH DISTINCT x
  DELETE x
  RETURN count(x) AS removed
}
CALL (facts) {
  UNWIND facts AS f
  WITH f
  WHERE f.summary_by = $run
  SET f.status = 'retracted', f.retired_at = datetime.statement(),
      f.retraction_reason = 'the consolidation run that wrote this summary was undone',
      f.retracted_by = $actor
  RETURN count(f) AS withdrawn
}
CALL (facts) {
  UNWIND facts AS f
  MATCH (f)-[x:CONTRADICTS]-()
  WHERE x.resolved_by = $run
  WITH DISTINCT x
  REMOVE x.resolved_at, x.resolution, x.resolved_by, x.kept
  RETURN count(x) AS reopened
}
CALL (facts) {
  UNWIND facts AS f
  MATCH (f)-[x:FLAGGED_BY]->()
  WHERE x.closed_by = $run
  WITH DISTINCT x
  REMOVE x.closed_at, x.closed_by, x.closing
  RETURN count(x) AS flags_reopened
}
SET r.status = 'undone', r.undone_at = datetime.statement(), r.undone_by = $actor
RETURN size(facts) AS restored, removed, reopened, flags_reopened, withdrawn,
       r.undone_at AS undone_at
