// name: true_at
// mode: read
// params: ns, valid_at, limit
// returns: id, text, valid_from, valid_to, recorded_at
// example: {"ns": "demo", "valid_at": "2026-03-15T00:00:00Z", "limit": 100}
// What was true in the world at valid time $valid_at, per what is believed now (invariant 3).
// A superseded fact counts within its closed valid interval (the update ended it); retracted
// and merged facts do not. Facts with a valid_from come first, the latest start first; those
// without one (no stated start) after them.
// $valid_at is a datetime with a zone, or ISO-8601 text with an offset or a zone id; text
// without one (which Neo4j would read as UTC), and no time at all, are refused with an
// error that says so.
WITH CASE WHEN $valid_at IS :: STRING THEN trim(toString($valid_at)) ELSE $valid_at END AS given
WITH CASE WHEN given IS :: STRING AND given =~ '[0-9]{4}-[0-9]{2}-[0-9]{2} .+'
            THEN left(given, 10) + 'T' + substring(given, 11)  // a space for the T, as in str()
          ELSE given END AS given
WITH CASE
       WHEN given IS NULL THEN datetime('no time given (give one, as in 2026-01-01T00:00:00Z)')
       WHEN given IS :: ZONED DATETIME THEN given
       WHEN given IS :: STRING AND given =~ '.+T.+([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)(\\[.+\\])?|.+T.+\\[.+\\]'
         THEN datetime(given)
       ELSE datetime('not a time with a zone: ' + toString(given) + ' (give one, as in 2026-01-01T00:00:00Z)')
     END AS v
// In UTC, as stored: compared by instant. Built from the instant itself: converting with
// datetime({datetime: v, timezone: 'Z'}) reads v's local time again, which in a zone's
// repeated hour (clocks going back) takes the earlier of the two and loses an hour.
WITH datetime({epochSeconds: v.epochSeconds, nanosecond: v.nanosecond}) AS v
MATCH (f:Fact {ns: $ns})
WHERE (f.retired_at IS NULL OR f.status = 'superseded')
  AND (f.valid_from IS NULL OR f.valid_from <= v)
  AND (f.valid_to IS NULL OR f.valid_to > v)
RETURN f.id AS id, f.text AS text, f.valid_from AS valid_from, f.valid_to AS valid_to,
       f.recorded_at AS recorded_at
ORDER BY f.valid_from IS NULL, f.valid_from DESC, f.recorded_at DESC  // dated facts first
LIMIT $limit
