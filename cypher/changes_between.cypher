// name: changes_between
// mode: read
// params: ns: string, since: datetime, until: datetime, limit: integer
// returns: at, change, id, text, status, related, actor, reason
// example: {"ns": "demo", "since": "2026-01-01T00:00:00Z", "until": "2026-03-01T00:00:00Z", "limit": 100}
// How what graphmem believed changed between two transaction times, after $since and up to
// $until, oldest first. change is 'recorded' for a fact it began to believe (related: the
// facts it superseded, with the supersession's reason; actor: who created it), 'retired' for one it
// stopped believing (related: the fact that superseded it or that it was merged into, with
// that step's actor and reason; a retracted fact has none, and its retraction's actor and
// reason) and 'forgotten' for one erased by forget (actor and reason are the erasure's). A
// fact erased since keeps its 'recorded' and 'retired' rows, with status 'forgotten' and no
// text. So the facts believed as of $until are those believed as of $since, plus the
// recorded ones, minus the retired and the forgotten ones (beliefs_as_of at both times).
// $since and $until are datetimes with a zone, or ISO-8601 text with an offset or a zone id;
// text without one (which Neo4j would read as UTC), no time at all, and an $until before
// $since are refused with an error that says so.
WITH [$since, $until] AS given
{{zoned_times}}
WITH times[0] AS t0, times[1] AS t1
WITH t0, CASE WHEN t1 < t0
                THEN datetime('until (' + toString(t1) + ') is before since (' + toString(t0) + ')')
              ELSE t1 END AS t1
CALL (t0, t1) {
  MATCH (f:Fact|Tombstone {ns: $ns})
  WHERE (f:Fact OR f.fact_id IS NOT NULL) AND f.recorded_at > t0 AND f.recorded_at <= t1
  OPTIONAL MATCH (f)-[s:SUPERSEDES]->(old:Fact|Tombstone {ns: $ns})
  WITH f, s, coalesce(old.id, old.fact_id) AS old_id
  ORDER BY old_id
  WITH f, collect(old_id) AS related, coalesce(f.recorded_by, collect(s.actor)[0]) AS actor,
       collect(s.reason)[0] AS reason
  RETURN f.recorded_at AS at, 'recorded' AS change, coalesce(f.id, f.fact_id) AS id,
         f.text AS text, CASE WHEN f:Tombstone THEN 'forgotten' ELSE f.status END AS status,
         related, actor, reason
  UNION ALL
  MATCH (f:Fact|Tombstone {ns: $ns})
  WHERE (f:Fact OR f.fact_id IS NOT NULL) AND f.retired_at > t0 AND f.retired_at <= t1
  OPTIONAL MATCH (f)-[s:SUPERSEDES|MERGED_INTO]-(new:Fact|Tombstone {ns: $ns})
  WHERE (type(s) = 'SUPERSEDES' AND startNode(s) = new)
     OR (type(s) = 'MERGED_INTO' AND startNode(s) = f)
  RETURN f.retired_at AS at, 'retired' AS change, coalesce(f.id, f.fact_id) AS id,
         f.text AS text, CASE WHEN f:Tombstone THEN 'forgotten' ELSE f.status END AS status,
         [x IN [coalesce(new.id, new.fact_id)] WHERE x IS NOT NULL] AS related,
         CASE WHEN s IS NULL THEN f.retracted_by ELSE s.actor END AS actor,
         CASE WHEN s IS NULL THEN f.retraction_reason ELSE s.reason END AS reason
  UNION ALL
  MATCH (t:Tombstone {ns: $ns})
  WHERE t.fact_id IS NOT NULL AND t.at > t0 AND t.at <= t1
  RETURN t.at AS at, 'forgotten' AS change, t.fact_id AS id, null AS text,
         'forgotten' AS status, [] AS related, t.actor AS actor, t.reason AS reason
}
RETURN at, change, id, text, status, related, actor, reason
ORDER BY at, CASE change WHEN 'recorded' THEN 0 WHEN 'retired' THEN 1 ELSE 2 END, id
LIMIT $limit
