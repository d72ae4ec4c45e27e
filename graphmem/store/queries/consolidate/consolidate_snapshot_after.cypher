// name: consolidate_snapshot_after
// mode: write
// params: ns, run, clusters
// returns: changes
// After run $run changed the facts of clusters $clusters, keeps each one's new state (after_*)
// beside its earlier one: undo refuses when a fact no longer is as the run left it.
MATCH (c:ConsolidationChange {ns: $ns, run: $run})
WHERE c.cluster IN $clusters
MATCH (f:Fact {id: c.fact_id})
WHERE f.ns = $ns
SET c.after_status = f.status, c.after_retired_at = f.retired_at, c.after_valid_to = f.valid_to,
    c.after_stated_valid_to = f.stated_valid_to, c.after_superseded_by = f.superseded_by,
    c.after_pinned = f.pinned, c.after_retraction_reason = f.retraction_reason,
    c.after_retracted_by = f.retracted_by, c.after_valid_from = f.valid_from,
    c.after_valid_from_set_at = f.valid_from_set_at, c.after_tier = f.tier,
    c.after_tier_at = f.tier_at, c.after_tier_by = f.tier_by
RETURN count(*) AS changes
