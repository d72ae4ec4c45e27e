// name: superseded_between
// mode: read
// params: ns: string, since: datetime, until: datetime, limit: integer
// returns: at, how, old_id, old_text, new_id, new_text, actor, reason
// example: {"ns": "demo", "since": "2026-01-01T00:00:00Z", "until": "2026-03-01T00:00:00Z", "limit": 100}
// Every fact replaced after $since and up to $until (transaction time), oldest first, and
// why: how is 'superseded' (a SUPERSEDES edge: remember(supersedes=...), resolve, or a
// consolidation run) or 'merged' (a MERGED_INTO edge: a duplicate retired into its survivor by
// a consolidation run); old_* is the fact retired, new_* the one that replaced it, with the
// step's actor ('api', 'extractor' or a run id) and reason. A fact erased by forget since
// shows its id with a null text (and the step's reason is erased with it). Retractions,
// which replace nothing, are in changes_between.
// $since and $until are datetimes with a zone, or ISO-8601 text with an offset or a zone id;
// text without one, no time at all, and an $until before $since are refused.
WITH [$since, $until] AS given
{{zoned_times}}
WITH times[0] AS t0, times[1] AS t1
WITH t0, CASE WHEN t1 < t0
                THEN datetime('until (' + toString(t1) + ') is before since (' + toString(t0) + ')')
              ELSE t1 END AS t1
MATCH (a:Fact|Tombstone {ns: $ns})-[s:SUPERSEDES|MERGED_INTO]->(b:Fact|Tombstone {ns: $ns})
WHERE s.at > t0 AND s.at <= t1
WITH s, CASE type(s) WHEN 'SUPERSEDES' THEN b ELSE a END AS old,
     CASE type(s) WHEN 'SUPERSEDES' THEN a ELSE b END AS new
RETURN s.at AS at,
       CASE type(s) WHEN 'SUPERSEDES' THEN 'superseded' ELSE 'merged' END AS how,
       coalesce(old.id, old.fact_id) AS old_id, old.text AS old_text,
       coalesce(new.id, new.fact_id) AS new_id, new.text AS new_text,
       s.actor AS actor, s.reason AS reason
ORDER BY at, old_id
LIMIT $limit
