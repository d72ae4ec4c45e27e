// name: tiers_apply
// mode: write
// params: ns, run, rows
// returns: moved
// Moves each row's believed fact to the tier run $run chose (tier_at: now, tier_by: the run),
// keeping its state before and after on a :ConsolidationChange of cluster 0 with the row's
// reason, as consolidate_snapshot and consolidate_snapshot_after do for the other
// operations (undo reads them), in one pass over the rows.
UNWIND $rows AS row
MATCH (f:Fact {id: row.id})
WHERE f.ns = $ns AND f.retired_at IS NULL
CREATE (c:ConsolidationChange {
  ns: $ns, run: $run, cluster: 0, fact_id: f.id, at: datetime.statement(), reason: row.reason,
  before_status: f.status, before_retired_at: f.retired_at, before_valid_to: f.valid_to,
  before_stated_valid_to: f.stated_valid_to, before_superseded_by: f.superseded_by,
  before_pinned: f.pinned, before_retraction_reason: f.retraction_reason,
  before_retracted_by: f.retracted_by, before_valid_from: f.valid_from,
  before_valid_from_set_at: f.valid_from_set_at, before_tier: f.tier, before_tier_at: f.tier_at,
  before_tier_by: f.tier_by
})
SET f.tier = row.tier, f.tier_at = datetime.statement(), f.tier_by = $run
SET c.after_status = f.status, c.after_retired_at = f.retired_at, c.after_valid_to = f.valid_to,
    c.after_stated_valid_to = f.stated_valid_to, c.after_superseded_by = f.superseded_by,
    c.after_pinned = f.pinned, c.after_retraction_reason = f.retraction_reason,
    c.after_retracted_by = f.retracted_by, c.after_valid_from = f.valid_from,
    c.after_valid_from_set_at = f.valid_from_set_at, c.after_tier = f.tier,
    c.after_tier_at = f.tier_at, c.after_tier_by = f.tier_by
RETURN count(f) AS moved
