// name: consolidate_snapshot
// mode: write
// params: ns, run, rows
// returns: changes
// Before run $run changes each row's fact (row.id, of cluster row.cluster), keeps its state in
// a :ConsolidationChange (before_*), so that undo can restore it exactly.
UNWIND $rows AS row
MATCH (f:Fact {id: row.id})
WHERE f.ns = $ns
CREATE (:ConsolidationChange {
  ns: $ns, run: $run, cluster: row.cluster, fact_id: f.id, at: datetime.statement(),
  before_status: f.status, before_retired_at: f.retired_at, before_valid_to: f.valid_to,
  before_stated_valid_to: f.stated_valid_to, before_superseded_by: f.superseded_by,
  before_pinned: f.pinned, before_retraction_reason: f.retraction_reason,
  before_retracted_by: f.retracted_by, before_valid_from: f.valid_from,
  before_valid_from_set_at: f.valid_from_set_at, before_tier: f.tier, before_tier_at: f.tier_at,
  before_tier_by: f.tier_by
})
RETURN count(*) AS changes
