// name: ns_drop
// mode: write
// params: ns, batch: integer
// returns: labels, deleted
// Deletes up to $batch nodes of namespace $ns with their relationships (DETACH DELETE), facts
// first, then episodes, tombstones and the consolidation nodes: one batch of dropping a whole
// namespace, run again until it deletes nothing, so that a big namespace never needs one
// transaction of its size. Only namespaces drop (confirmed by the caller) and the clean-up of
// an import's staging namespace run it. Returns how many nodes of each label set it deleted.
CALL () {
  MATCH (n:Fact) WHERE n.ns = $ns RETURN n
  UNION ALL
  MATCH (n:Episode) WHERE n.ns = $ns RETURN n
  UNION ALL
  MATCH (n:Tombstone) WHERE n.ns = $ns AND n.at IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:ConsolidationRun) WHERE n.ns = $ns AND n.started_at IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:ConsolidationRecord {ns: $ns}) RETURN n
  UNION ALL
  MATCH (n:ConsolidationChange) WHERE n.ns = $ns AND n.run IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:ConsolidationState {ns: $ns}) RETURN n
}
WITH n
LIMIT $batch
WITH n, labels(n) AS labels
DETACH DELETE n
RETURN labels, count(*) AS deleted
