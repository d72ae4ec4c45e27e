// name: rewrite_retract
// mode: write
// params: ns, actor, rows
// returns: applied
// Retracts each row's believed fact ("that was never true"): status 'retracted', retired_at
// now (so it is still believed as of earlier times), retraction_reason and retracted_by.
UNWIND $rows AS row
MATCH (f:Fact {id: row.id})
WHERE f.ns = $ns AND f.retired_at IS NULL
SET f.status = 'retracted', f.retired_at = datetime.statement(),
    f.retraction_reason = row.reason, f.retracted_by = $actor
RETURN count(row) AS applied
