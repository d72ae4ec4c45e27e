// name: tiers_read
// mode: read
// params: ns
// returns: id, text, importance, recorded_at, last_accessed_at, access_count, tier, now
// What the tier pass scores: every believed, unpinned fact of the namespace with its
// importance, recording time, use and tier now (null: warm), and the statement's time.
MATCH (f:Fact {ns: $ns})
WHERE f.retired_at IS NULL AND coalesce(f.pinned, false) = false
RETURN f.id AS id, f.text AS text, f.importance AS importance, f.recorded_at AS recorded_at,
       f.last_accessed_at AS last_accessed_at, f.access_count AS access_count,
       f.tier AS tier, datetime.statement() AS now
