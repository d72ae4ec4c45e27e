// name: true_at_as_of
// mode: read
// params: ns: string, valid_at: datetime, as_of: datetime, limit: integer
// returns: id, text, status, valid_from, valid_to, recorded_at, retired_at
// example: {"ns": "demo", "valid_at": "2026-03-15T00:00:00Z", "as_of": "2026-04-01T00:00:00Z", "limit": 100}
// Both clocks at once: what graphmem believed at transaction time $as_of to be true in the
// world at valid time $valid_at. A fact counts if it was believed at $as_of (invariant 2) and
// its valid interval, as it stood at $as_of, holds $valid_at (invariant 3): for a fact
// superseded after $as_of that is the valid_to it carried while believed (stated_valid_to),
// not the end its supersession gave it later; and a fact recorded without a valid_from that a
// later supersession gave one (valid_from_set_at after $as_of) had an open start then. A fact
// superseded by $as_of still counts within its closed interval (it is what was believed about
// that past); one retracted or merged by $as_of does not. status and retired_at are the fact's now; valid_from and valid_to are the
// ones of $as_of.
// Facts with a valid_from come first, the latest start first; those without one after them.
// With $as_of now, this is true_at. Times are as in true_at (a zone is required).
WITH [$valid_at, $as_of] AS given
{{zoned_times}}
WITH times[0] AS v, times[1] AS t
MATCH (f:Fact {ns: $ns})
WHERE ({{believed_at(f, t)}} OR (f.recorded_at <= t AND f.status = 'superseded'))
WITH f, v, t,
     CASE WHEN f.valid_from_set_at > t THEN null ELSE f.valid_from END AS valid_from,
     CASE WHEN f.status = 'superseded' AND f.retired_at > t THEN f.stated_valid_to
          ELSE f.valid_to END AS valid_to
WHERE {{true_at(valid_from, valid_to, v)}}
RETURN f.id AS id, f.text AS text, f.status AS status, valid_from,
       valid_to, f.recorded_at AS recorded_at, f.retired_at AS retired_at
ORDER BY valid_from IS NULL, valid_from DESC, f.recorded_at DESC, f.id  // dated first
LIMIT $limit
