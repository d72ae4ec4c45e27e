// name: beliefs_as_of
// mode: read
// params: ns, as_of, limit
// returns: id, text, status, recorded_at, retired_at, valid_from, valid_to, source
// example: {"ns": "demo", "as_of": "2026-01-01T00:00:00Z", "limit": 100}
// What graphmem believed at transaction time $as_of (ISO-8601 with offset), newest first:
// facts recorded by then and not yet retired by then (invariant 2). status is the fact's status
// now, and so is retired_at (later than $as_of for a fact retired since); valid_to is the one
// believed then (a later supersession closes it: see stated_valid_to).
// $as_of is a datetime with a zone, or ISO-8601 text with an offset or a zone id; text
// without one (which Neo4j would read as UTC), and no time at all, are refused with an
// error that says so.
WITH [$as_of] AS given
{{zoned_times}}
WITH times[0] AS t
MATCH (f:Fact {ns: $ns})
WHERE {{believed_at(f, t)}}
RETURN f.id AS id, f.text AS text, f.status AS status, f.recorded_at AS recorded_at,
       f.retired_at AS retired_at, f.valid_from AS valid_from,
       CASE WHEN f.status = 'superseded' AND f.retired_at > t THEN f.stated_valid_to
            ELSE f.valid_to END AS valid_to,
       f.source AS source
ORDER BY f.recorded_at DESC
LIMIT $limit
