// name: forget_scrub
// mode: write
// params: ns, actor, records, at
// returns: scrubbed
// Writes back each consolidation record of $records (found by forget_records in this
// transaction) without the words it held: its raw plans, reasons and review texts.
UNWIND $records AS row
MATCH (r:ConsolidationRecord {ns: $ns})
WHERE elementId(r) = row.key
SET r.plans = row.plans, r.applied = row.applied, r.rejected = row.rejected,
    r.review = row.review, r.erased_at = $at, r.erased_by = $actor
RETURN count(r) AS scrubbed
