// name: rewrite_link
// mode: write
// params: ns, actor, contradicts, references
// returns: contradicted, referenced
// Opens a CONTRADICTS edge for each row of $contradicts ({a, b, reason}, both believed), and
// a REFERENCES edge for each row of $references ({source, target, reason}), actor $actor.
CALL () {
  UNWIND $contradicts AS row
  MATCH (a:Fact {id: row.a})
  WHERE a.ns = $ns AND a.retired_at IS NULL
  MATCH (b:Fact {id: row.b})
  WHERE b.ns = $ns AND b.retired_at IS NULL
  CREATE (a)-[:CONTRADICTS {at: datetime.statement(), actor: $actor, reason: row.reason}]->(b)
  RETURN count(row) AS contradicted
}
CALL () {
  UNWIND $references AS row
  MATCH (a:Fact {id: row.source})
  WHERE a.ns = $ns
  MATCH (b:Fact {id: row.target})
  WHERE b.ns = $ns
  CREATE (a)-[:REFERENCES {at: datetime.statement(), actor: $actor, reason: row.reason}]->(b)
  RETURN count(row) AS referenced
}
RETURN contradicted, referenced
