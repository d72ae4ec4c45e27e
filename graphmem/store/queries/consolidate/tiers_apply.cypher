// name: tiers_apply
// mode: write
// params: ns, run, rows
// returns: moved
// Moves each row's believed fact to the tier run $run chose (tier_at: now, tier_by: the run),
// keeping on a :ConsolidationChange of cluster 0 (kind 'tier', with the row's reason) its
// tier fields before and after, which are all a tier move changes: undo gives them back.
UNWIND $rows AS row
MATCH (f:Fact {id: row.id})
WHERE f.ns = $ns AND f.retired_at IS NULL
CREATE (:ConsolidationChange {
  ns: $ns, run: $run, cluster: 0, fact_id: f.id, at: datetime.statement(), kind: 'tier',
  reason: row.reason, before_tier: f.tier, before_tier_at: f.tier_at,
  before_tier_by: f.tier_by, after_tier: row.tier, after_tier_at: datetime.statement(),
  after_tier_by: $run
})
SET f.tier = row.tier, f.tier_at = datetime.statement(), f.tier_by = $run
RETURN count(f) AS moved
