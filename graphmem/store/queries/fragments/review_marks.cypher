// The open review flags of `node` (a :Fact or :Episode), oldest first: what changed (event),
// how node is tied to it (relation), the cause's id and kind, when, by whom and why.
COLLECT {
  MATCH (node)-[x:FLAGGED_BY]->(cause)
  WHERE x.closed_at IS NULL
  RETURN {event: x.event, relation: x.relation,
          cause_id: coalesce(cause.id, cause.fact_id, cause.episode_id),
          cause_kind: CASE WHEN cause:Tombstone THEN 'tombstone'
                           WHEN cause:Episode THEN 'episode' ELSE 'fact' END,
          at: x.at, actor: x.actor, reason: x.reason}
  ORDER BY x.at
}
