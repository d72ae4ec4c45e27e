// name: never_recalled
// mode: read
// params: ns: string, before: datetime, limit: integer
// returns: id, text, recorded_at, source, tags, pinned
// example: {"ns": "demo", "before": "2026-01-01T00:00:00Z", "limit": 100}
// Believed facts (retired_at IS NULL) recorded before $before that recall has never returned
// (access_count 0 or absent), oldest first: candidates to review, reword or retract.
// $before is a datetime with a zone, or ISO-8601 text with an offset or a zone id; text
// without one, and no time at all, are refused.
WITH [$before] AS given
{{zoned_times}}
WITH times[0] AS t
MATCH (f:Fact {ns: $ns})
WHERE f.retired_at IS NULL AND f.recorded_at < t AND coalesce(f.access_count, 0) = 0
RETURN f.id AS id, f.text AS text, f.recorded_at AS recorded_at, f.source AS source,
       f.tags AS tags, f.pinned AS pinned
ORDER BY recorded_at, id
LIMIT $limit
