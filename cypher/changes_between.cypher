// name: changes_between
// mode: read
// params: ns, since, until, limit
// returns: at, change, id, text, status, related, actor, reason
// example: {"ns": "demo", "since": "2026-01-01T00:00:00Z", "until": "2026-03-01T00:00:00Z", "limit": 100}
// How what graphmem believed changed between two transaction times, after $since and up to
// $until, oldest first. change is 'recorded' for a fact it began to believe (related: the
// facts it superseded, with the supersession's actor and reason), 'retired' for one it stopped
// believing (related: the fact that replaced it, with the same actor and reason) and
// 'forgotten' for one erased by forget (no text is left; reason is the erasure's). So the
// facts believed as of $until are those believed as of $since, plus the recorded ones, minus
// the retired ones (beliefs_as_of at both times).
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
  MATCH (f:Fact {ns: $ns})
  WHERE f.recorded_at > t0 AND f.recorded_at <= t1
  OPTIONAL MATCH (f)-[s:SUPERSEDES]->(old:Fact {ns: $ns})
  WITH f, collect(old.id) AS related, collect(s.actor)[0] AS actor, collect(s.reason)[0] AS reason
  RETURN f.recorded_at AS at, 'recorded' AS change, f.id AS id, f.text AS text,
         f.status AS status, related, actor, reason
  UNION ALL
  MATCH (f:Fact {ns: $ns})
  WHERE f.retired_at > t0 AND f.retired_at <= t1
  OPTIONAL MATCH (new:Fact {ns: $ns})-[s:SUPERSEDES]->(f)
  RETURN f.retired_at AS at, 'retired' AS change, f.id AS id, f.text AS text,
         f.status AS status, [x IN [new.id] WHERE x IS NOT NULL] AS related,
         s.actor AS actor, s.reason AS reason
  UNION ALL
  MATCH (t:Tombstone {ns: $ns})
  WHERE t.fact_id IS NOT NULL AND t.at > t0 AND t.at <= t1
  RETURN t.at AS at, 'forgotten' AS change, t.fact_id AS id, null AS text, null AS status,
         [] AS related, null AS actor, t.reason AS reason
}
RETURN at, change, id, text, status, related, actor, reason
ORDER BY at, CASE change WHEN 'recorded' THEN 0 WHEN 'retired' THEN 1 ELSE 2 END, id
LIMIT $limit
