// name: most_recalled
// mode: read
// params: ns: string, limit: integer
// returns: id, text, status, access_count, last_accessed_at, recorded_at
// example: {"ns": "demo", "limit": 20}
// The facts recall has returned most often: access_count (one per recall, or context block,
// that returned the fact) and when that last happened (last_accessed_at), most recalled
// first, then the most recently recalled. Facts recall never returned are left out (see
// never_recalled); retired facts are included with their status, since their counts stay.
MATCH (f:Fact {ns: $ns})
WHERE f.access_count > 0
RETURN f.id AS id, f.text AS text, f.status AS status, f.access_count AS access_count,
       f.last_accessed_at AS last_accessed_at, f.recorded_at AS recorded_at
ORDER BY access_count DESC, last_accessed_at DESC, id
LIMIT $limit
