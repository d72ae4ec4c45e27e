// name: audit_marks_then
// mode: read
// params: ns, ids, as_of
// returns: id, contradictions, review
// For each fact of $ids, the marks it carried at transaction time $as_of: the contradictions
// open then (opened by then, not yet resolved, with a fact believed then) and the review flags
// open then (made by then, not yet closed), as Fact.contradictions and Fact.review read them.
UNWIND $ids AS id
MATCH (node:Fact {ns: $ns, id: id})
RETURN id,
  COLLECT {
    MATCH (node)-[c:CONTRADICTS]-(other:Fact)
    WHERE other.ns = $ns AND c.at <= $as_of AND (c.resolved_at IS NULL OR c.resolved_at > $as_of)
      AND {{believed_at(other, $as_of)}}
    RETURN {id: other.id, text: other.text, reason: c.reason, at: c.at, actor: c.actor}
    ORDER BY c.at, other.id
  } AS contradictions,
  COLLECT {
    MATCH (node)-[x:FLAGGED_BY]->(cause)
    WHERE cause.ns = $ns AND x.at <= $as_of AND (x.closed_at IS NULL OR x.closed_at > $as_of)
    RETURN {event: x.event, relation: x.relation,
            cause_id: coalesce(cause.id, cause.fact_id, cause.episode_id),
            cause_kind: CASE WHEN cause:Tombstone THEN 'tombstone'
                             WHEN cause:Episode THEN 'episode' ELSE 'fact' END,
            at: x.at, actor: x.actor, reason: x.reason}
    ORDER BY x.at
  } AS review
