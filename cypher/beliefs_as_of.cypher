// name: beliefs_as_of
// mode: read
// params: ns: string, as_of: datetime, limit: integer
// returns: id, text, status, recorded_at, retired_at, valid_from, valid_to, source
// example: {"ns": "demo", "as_of": "2026-01-01T00:00:00Z", "limit": 100}
// What graphmem believed at transaction time $as_of, newest first: facts recorded by then and
// not yet retired by then (invariant 2). status is the fact's status now, and so is
// retired_at (later than $as_of for a fact retired since); valid_to is the one believed then
// (a later supersession closes it: see stated_valid_to).
// A fact believed then and erased by forget since is a row too, with status 'forgotten' and
// no text, valid time or source (its :Tombstone keeps only its id and times): the answer
// still counts what was believed, without the words.
// $as_of is a datetime with a zone, or ISO-8601 text with an offset or a zone id; text
// without one (which Neo4j would read as UTC), and no time at all, are refused with an
// error that says so.
WITH [$as_of] AS given
{{zoned_times}}
WITH times[0] AS t
CALL (t) {
  MATCH (f:Fact {ns: $ns})
  WHERE {{believed_at(f, t)}}
  RETURN f.id AS id, f.text AS text, f.status AS status, f.recorded_at AS recorded_at,
         f.retired_at AS retired_at, f.valid_from AS valid_from,
         CASE WHEN f.status = 'superseded' AND f.retired_at > t THEN f.stated_valid_to
              ELSE f.valid_to END AS valid_to,
         f.source AS source
  UNION ALL
  // An erased fact was believed from its recording until its retirement or, if it was still
  // believed then, its erasure (at).
  MATCH (g:Tombstone {ns: $ns})
  WHERE g.fact_id IS NOT NULL AND g.recorded_at <= t AND coalesce(g.retired_at, g.at) > t
  RETURN g.fact_id AS id, null AS text, 'forgotten' AS status, g.recorded_at AS recorded_at,
         g.retired_at AS retired_at, null AS valid_from, null AS valid_to, null AS source
}
RETURN id, text, status, recorded_at, retired_at, valid_from, valid_to, source
ORDER BY recorded_at DESC, id
LIMIT $limit
