// name: bench_access_history
// mode: write
// params: ns, rows
// returns: facts
// The tier benchmark's use history: the namespace's facts in id order take $rows in order;
// each was recorded `age` days ago, last used `idle` days ago (null: never) `uses` times,
// with the caller's `importance` (null: none).
MATCH (f:Fact {ns: $ns})
WITH f
ORDER BY f.id
WITH collect(f) AS facts
UNWIND range(0, size(facts) - 1) AS i
WITH facts[i] AS f, $rows[i] AS row
WHERE row IS NOT NULL
SET f.recorded_at = datetime.statement() - duration({seconds: toInteger(row.age * 86400)}),
    f.last_accessed_at = CASE WHEN row.idle IS NULL THEN null
      ELSE datetime.statement() - duration({seconds: toInteger(row.idle * 86400)}) END,
    f.access_count = row.uses,
    f.importance = row.importance
RETURN count(f) AS facts
