// name: import_flip
// mode: write
// params: stage, ns
// returns: nodes, relationships
// The last step of a namespace import, in one transaction: every node staged in namespace
// $stage moves to namespace $ns (so the whole import becomes visible at once, or nothing of
// it does), with the relationships that carried the staging namespace (review flags). Returns
// the nodes moved by label and the relationships leaving them, which the caller compares with
// what it staged before the transaction commits.
CALL () {
  CALL () {
    MATCH (n:Fact) WHERE n.ns = $stage RETURN n
    UNION ALL
    MATCH (n:Episode) WHERE n.ns = $stage RETURN n
    UNION ALL
    MATCH (n:Tombstone) WHERE n.ns = $stage AND n.at IS NOT NULL RETURN n
    UNION ALL
    MATCH (n:ConsolidationRun) WHERE n.ns = $stage AND n.started_at IS NOT NULL RETURN n
    UNION ALL
    MATCH (n:ConsolidationState {ns: $stage}) RETURN n
    UNION ALL
    MATCH (n:ConsolidationRecord {ns: $stage}) RETURN n
    UNION ALL
    MATCH (n:ConsolidationChange) WHERE n.ns = $stage AND n.run IS NOT NULL RETURN n
  }
  SET n.ns = $ns
  WITH n
  CALL (n) {
    MATCH (n)-[r]->()
    FOREACH (_ IN CASE WHEN r.ns = $stage THEN [1] ELSE [] END | SET r.ns = $ns)
    RETURN count(r) AS edges
  }
  WITH labels(n) AS labels, count(n) AS moved, sum(edges) AS edges
  RETURN collect([labels, moved]) AS nodes, sum(edges) AS relationships
}
RETURN nodes, relationships
