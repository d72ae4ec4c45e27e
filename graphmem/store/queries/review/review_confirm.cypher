// name: review_confirm
// mode: write
// params: ns, id, actor, reason
// returns: found, flags
// Closes the open review flags of fact or episode $id as confirmed (closing 'confirmed', by
// $actor, with $reason): someone looked and it stands. found: whether $id is a fact or episode
// of the namespace; flags: the flags closed, oldest first.
OPTIONAL CALL () {
  MATCH (n:Fact {ns: $ns, id: $id})
  RETURN n
  UNION
  MATCH (n:Episode {ns: $ns, id: $id})
  RETURN n
}
CALL (n) {
  MATCH (n)-[x:FLAGGED_BY]->(c)
  WHERE x.closed_at IS NULL
  SET x.closed_at = datetime.statement(), x.closed_by = $actor, x.closing = 'confirmed',
      x.closing_reason = $reason
  WITH n, x, c
  ORDER BY x.at
  RETURN collect({{review_flag_map}}) AS flags
}
RETURN n IS NOT NULL AS found, flags
