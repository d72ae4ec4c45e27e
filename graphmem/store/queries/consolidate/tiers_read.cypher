// name: tiers_read
// mode: read
// params: ns
// returns: ids, importance, used, uses, tiers, now
// What the tier pass scores, as parallel lists (plain values: the pass reads every believed
// fact): every believed, unpinned fact of the namespace by id, its caller's importance, when
// it was last used (the later of its recording and its last access, in epoch milliseconds),
// its access count and its tier (null: warm); and the statement's time in epoch milliseconds.
MATCH (f:Fact {ns: $ns})
WHERE f.retired_at IS NULL AND coalesce(f.pinned, false) = false
WITH f, CASE WHEN f.last_accessed_at > f.recorded_at THEN f.last_accessed_at
             ELSE f.recorded_at END AS used
RETURN collect(f.id) AS ids, collect([f.importance]) AS importance,
       collect(used.epochMillis) AS used, collect(coalesce(f.access_count, 0)) AS uses,
       collect([f.tier]) AS tiers, datetime.statement().epochMillis AS now
