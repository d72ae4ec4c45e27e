// name: erasures_between
// mode: read
// params: ns: string, since: datetime, until: datetime, limit: integer
// returns: at, kind, erased_id, erasure, actor, reason, status_at_erasure, recorded_at, retired_at, occurred_at
// example: {"ns": "demo", "since": "2026-01-01T00:00:00Z", "until": "2026-03-01T00:00:00Z", "limit": 100}
// What forget erased after $since and up to $until, oldest first: one row per :Tombstone,
// kind 'fact' or 'episode', the erased id, the forget call it belonged to (erasure: one id
// for everything one call erased), who asked (actor) and why (reason), the fact's status when
// erased, when the node was recorded (and a fact retired), and when a message was sent. A
// tombstone holds no content, so neither does this answer.
// $since and $until are datetimes with a zone, or ISO-8601 text with an offset or a zone id;
// text without one, no time at all, and an $until before $since are refused.
WITH [$since, $until] AS given
{{zoned_times}}
WITH times[0] AS t0, times[1] AS t1
WITH t0, CASE WHEN t1 < t0
                THEN datetime('until (' + toString(t1) + ') is before since (' + toString(t0) + ')')
              ELSE t1 END AS t1
MATCH (t:Tombstone {ns: $ns})
WHERE t.at > t0 AND t.at <= t1
RETURN t.at AS at, t.kind AS kind, coalesce(t.fact_id, t.episode_id) AS erased_id,
       t.erasure AS erasure, t.actor AS actor, t.reason AS reason,
       t.status_at_erasure AS status_at_erasure, t.recorded_at AS recorded_at,
       t.retired_at AS retired_at, t.occurred_at AS occurred_at
ORDER BY at, kind, erased_id
LIMIT $limit
