// name: rewrite_merge
// mode: write
// params: ns, actor, rows
// returns: applied
// Each row's duplicate is retired into its survivor (both believed): status 'merged',
// retired_at, superseded_by and a MERGED_INTO edge; what the duplicate carried moves to the
// survivor as new edges (actor $actor, carried_from the duplicate's id): its DERIVED_FROM
// provenance, its REFERENCES both ways and its open contradictions, each unless the survivor
// already has it. A survivor of a pinned duplicate is pinned.
UNWIND $rows AS row
MATCH (s:Fact {id: row.survivor})
WHERE s.ns = $ns AND s.retired_at IS NULL
MATCH (d:Fact {id: row.duplicate})
WHERE d.ns = $ns AND d.retired_at IS NULL
CREATE (d)-[:MERGED_INTO {at: datetime.statement(), actor: $actor, reason: row.reason}]->(s)
SET d.status = 'merged', d.retired_at = datetime.statement(), d.superseded_by = s.id,
    s.pinned = coalesce(s.pinned, false) OR coalesce(d.pinned, false)
WITH row, s, d
CALL (s, d) {
  MATCH (d)-[:DERIVED_FROM]->(e:Episode)
  WHERE NOT (s)-[:DERIVED_FROM]->(e)
  CREATE (s)-[:DERIVED_FROM {at: datetime.statement(), actor: $actor, reason: null,
                             carried_from: d.id}]->(e)
  RETURN count(e) AS provenance
}
CALL (s, d) {
  MATCH (d)-[r:REFERENCES]->(o:Fact)
  WHERE o <> s AND NOT (s)-[:REFERENCES]->(o)
  CREATE (s)-[:REFERENCES {at: datetime.statement(), actor: $actor, reason: r.reason,
                           carried_from: d.id}]->(o)
  RETURN count(o) AS references_out
}
CALL (s, d) {
  MATCH (o:Fact)-[r:REFERENCES]->(d)
  WHERE o <> s AND NOT (o)-[:REFERENCES]->(s)
  CREATE (o)-[:REFERENCES {at: datetime.statement(), actor: $actor, reason: r.reason,
                           carried_from: d.id}]->(s)
  RETURN count(o) AS references_in
}
CALL (s, d) {
  MATCH (d)-[c:CONTRADICTS]-(o:Fact)
  WHERE c.resolved_at IS NULL AND o <> s AND o.retired_at IS NULL
    AND NOT EXISTS { (s)-[open:CONTRADICTS]-(o) WHERE open.resolved_at IS NULL }
  CREATE (s)-[:CONTRADICTS {at: datetime.statement(), actor: $actor, reason: c.reason,
                            carried_from: d.id}]->(o)
  RETURN count(o) AS contradictions
}
RETURN count(row) AS applied
