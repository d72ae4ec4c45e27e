// name: review_flag
// mode: write
// params: ns, event, actor, rows, exclude, create, at
// returns: flags, closed
// After $event ('forgotten', 'superseded', 'merged' or 'retracted') happened in this
// transaction to each row's fact or episode (row.id; row.by: the fact that replaced it, if
// any; row.reason: why), flags for review every believed fact of the namespace tied to it: one
// that REFERENCES it (references), one derived from a message it was derived from
// (derived_with), for an erased fact one with an open contradiction with it (contradicts), and
// for an erased message a fact derived from it that keeps other messages (derived_from). Not
// flagged: row.by, the ids in $exclude (changed by the same operation), and a fact with an
// open flag for the same cause and event. The changed node's own open flags are closed
// (closing: $event): it no longer stands as it was flagged. With $create false, only that
// closing is done (a whole namespace erased: nothing is left to flag). Flags are made and
// closed at $at where the change has one time for all it writes (an erasure), else now.
UNWIND $rows AS row
CALL (row) {
  MATCH (c:Fact {id: row.id})
  WHERE c.ns = $ns
  RETURN c
  UNION
  MATCH (c:Episode {id: row.id})
  WHERE c.ns = $ns
  RETURN c
}
CALL (c) {
  MATCH (c)-[o:FLAGGED_BY]->()
  WHERE o.closed_at IS NULL
  SET o.closed_at = coalesce($at, datetime.statement()), o.closed_by = $actor, o.closing = $event
  RETURN count(o) AS closed
}
CALL (c, row) {
  WITH c, row
  WHERE $create
  CALL (c) {
    MATCH (f:Fact)-[:REFERENCES]->(c)
    RETURN f, 'references' AS relation
    UNION
    MATCH (c)-[:DERIVED_FROM]->(:Episode)<-[:DERIVED_FROM]-(f:Fact)
    RETURN f, 'derived_with' AS relation
    UNION
    MATCH (c)-[x:CONTRADICTS]-(f:Fact)
    WHERE $event = 'forgotten' AND x.resolved_at IS NULL
    RETURN f, 'contradicts' AS relation
    UNION
    MATCH (f:Fact)-[:DERIVED_FROM]->(c:Episode)
    RETURN f, 'derived_from' AS relation
  }
  WITH c, row, f, collect(relation)[0] AS relation
  WHERE f.ns = $ns AND f.retired_at IS NULL AND f <> c AND NOT f.id IN $exclude
    AND f.id <> coalesce(row.by, '')
    AND NOT EXISTS { (f)-[o:FLAGGED_BY]->(c) WHERE o.closed_at IS NULL AND o.event = $event }
  CREATE (f)-[:FLAGGED_BY {ns: $ns, event: $event, relation: relation, at: coalesce($at, datetime.statement()),
                           actor: $actor, reason: row.reason, by: row.by}]->(c)
  RETURN collect({flagged: f.id, cause: row.id, relation: relation}) AS made
}
RETURN reduce(all = [], m IN collect(made) | all + m) AS flags, sum(closed) AS closed
