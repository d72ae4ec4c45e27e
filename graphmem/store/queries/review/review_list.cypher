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
RETURN {{review_flag_map}} AS flag
ORDER BY x.at, n.id
LIMIT $limit
