// name: review_flags
// mode: read
// params: ns: string, include_closed: boolean, limit: integer
// returns: flagged_id, flagged_kind, flagged_text, event, relation, cause_id, cause_kind, by, at, actor, reason, closed_at, closed_by, closing
// example: {"ns": "demo", "include_closed": false, "limit": 100}
// Facts and messages flagged for review, oldest flag first: each FLAGGED_BY edge from the
// flagged node (flagged_kind 'fact' or 'episode', or 'forgotten' once erased) to its cause
// (cause_kind 'fact', 'episode' or 'tombstone' for an erased one): what happened to the cause
// (event: forgotten, superseded, merged, retracted, previously_forgotten), how the flagged
// node rests on it (relation: references, derived_with, contradicts, derived_from,
// same_text), the fact that replaced or absorbed the cause (by), when, by whom and why. Only
// open flags (closed_at null) unless $include_closed; a closed flag has closed_at, closed_by
// and closing ('confirmed', or the event that retired the flagged fact).
MATCH (n:Fact|Episode|Tombstone {ns: $ns})-[x:FLAGGED_BY]->(c:Fact|Episode|Tombstone {ns: $ns})
WHERE $include_closed OR x.closed_at IS NULL
RETURN coalesce(n.id, n.fact_id, n.episode_id) AS flagged_id,
       CASE WHEN n:Fact THEN 'fact' WHEN n:Episode THEN 'episode' ELSE 'forgotten' END
         AS flagged_kind,
       coalesce(n.text, n.content) AS flagged_text, x.event AS event, x.relation AS relation,
       coalesce(c.id, c.fact_id, c.episode_id) AS cause_id,
       CASE WHEN c:Fact THEN 'fact' WHEN c:Episode THEN 'episode' ELSE 'tombstone' END
         AS cause_kind,
       x.by AS by, x.at AS at, x.actor AS actor, x.reason AS reason, x.closed_at AS closed_at,
       x.closed_by AS closed_by, x.closing AS closing
ORDER BY at, flagged_id, cause_id
LIMIT $limit
