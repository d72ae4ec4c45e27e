// name: review_confirm
// mode: write
// params: ns, id, actor, reason
// returns: found, closed
// Closes the open review flags of fact or episode $id as confirmed (closing 'confirmed', by
// $actor, with $reason): someone looked and it stands. found: whether $id is a fact or episode
// of the namespace; closed: the flags closed.
OPTIONAL CALL () {
  MATCH (n:Fact {ns: $ns, id: $id})
  RETURN n
  UNION
  MATCH (n:Episode {ns: $ns, id: $id})
  RETURN n
}
CALL (n) {
  MATCH (n)-[x:FLAGGED_BY]->()
  WHERE x.closed_at IS NULL
  SET x.closed_at = datetime.statement(), x.closed_by = $actor, x.closing = 'confirmed',
      x.closing_reason = $reason
  RETURN count(x) AS closed
}
RETURN n IS NOT NULL AS found, closed
