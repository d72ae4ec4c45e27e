// name: review_list
// mode: read
// params: ns, id, open_only, limit
// returns: flag
// The review flags of the namespace's facts and episodes (of node $id only, unless null), the
// open ones only unless $open_only is false, oldest first, at most $limit.
CALL () {
  MATCH (n:Fact {ns: $ns})-[x:FLAGGED_BY]->(c)
  WHERE $id IS NULL OR n.id = $id
  RETURN n, x, c
  UNION
  MATCH (n:Episode {ns: $ns})-[x:FLAGGED_BY]->(c)
  WHERE $id IS NULL OR n.id = $id
  RETURN n, x, c
}
WITH n, x, c
WHERE NOT $open_only OR x.closed_at IS NULL
RETURN {flagged_id: n.id, flagged_kind: CASE WHEN n:Fact THEN 'fact' ELSE 'episode' END,
        text: coalesce(n.text, n.content), event: x.event, relation: x.relation,
        cause_id: coalesce(c.id, c.fact_id, c.episode_id),
        cause_kind: CASE WHEN c:Tombstone THEN 'tombstone'
                         WHEN c:Episode THEN 'episode' ELSE 'fact' END,
        at: x.at, actor: x.actor, reason: x.reason, closed_at: x.closed_at,
        closed_by: x.closed_by, closing: x.closing, closing_reason: x.closing_reason} AS flag
ORDER BY x.at, n.id
LIMIT $limit
