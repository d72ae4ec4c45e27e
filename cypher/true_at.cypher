// name: true_at
// mode: read
// params: ns: string, valid_at: datetime, limit: integer
// returns: id, text, status, valid_from, valid_to, recorded_at
// example: {"ns": "demo", "valid_at": "2026-03-15T00:00:00Z", "limit": 100}
// What was true in the world at valid time $valid_at, per what is believed now (invariant 3).
// A superseded fact counts within its closed valid interval (the update ended it); retracted
// and merged facts do not. Facts with a valid_from come first, the latest start first; those
// without one (no stated start) after them.
// $valid_at is a datetime with a zone, or ISO-8601 text with an offset or a zone id; text
// without one (which Neo4j would read as UTC), and no time at all, are refused with an
// error that says so. To ask what was believed at an earlier transaction time about
// $valid_at, use true_at_as_of.
WITH [$valid_at] AS given
{{zoned_times}}
WITH times[0] AS v
MATCH (f:Fact {ns: $ns})
WHERE (f.retired_at IS NULL OR f.status = 'superseded')
  AND {{true_at(f.valid_from, f.valid_to, v)}}
RETURN f.id AS id, f.text AS text, f.status AS status, f.valid_from AS valid_from,
       f.valid_to AS valid_to, f.recorded_at AS recorded_at
ORDER BY f.valid_from IS NULL, f.valid_from DESC, f.recorded_at DESC, f.id  // dated first
LIMIT $limit
