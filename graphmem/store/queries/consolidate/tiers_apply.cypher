// name: tiers_apply
// mode: write
// params: ns, run, rows
// returns: moved
// Moves each row's believed fact to the tier the run chose (tier_at: now, tier_by: run $run),
// the reason kept on the run's :ConsolidationChange of the fact.
UNWIND $rows AS row
MATCH (f:Fact {id: row.id})
WHERE f.ns = $ns AND f.retired_at IS NULL
SET f.tier = row.tier, f.tier_at = datetime.statement(), f.tier_by = $run
WITH f, row
OPTIONAL MATCH (c:ConsolidationChange {ns: $ns, run: $run})
WHERE c.fact_id = f.id AND c.cluster = 0
SET c.reason = row.reason
RETURN count(f) AS moved
