// The review flag `x` (a FLAGGED_BY relationship) from the flagged fact or episode `n` to its
// cause `c`, as ReviewFlag reads it.
{flagged_id: n.id, flagged_kind: CASE WHEN n:Fact THEN 'fact' ELSE 'episode' END,
 text: coalesce(n.text, n.content), event: x.event, relation: x.relation,
 cause_id: coalesce(c.id, c.fact_id, c.episode_id),
 cause_kind: CASE WHEN c:Tombstone THEN 'tombstone' WHEN c:Episode THEN 'episode' ELSE 'fact' END,
 at: x.at, actor: x.actor, reason: x.reason, closed_at: x.closed_at, closed_by: x.closed_by,
 closing: x.closing, closing_reason: x.closing_reason}
