// args: node
// The key a namespace export gives the node `node`: its id (a fact, an episode, a
// consolidation run), the erased id (a tombstone), 'state' (the namespace's one consolidation
// state), or what names it within its run (a consolidation record: run and clusters; a
// consolidation change: run, cluster and fact). Relationship records name their ends by it.
CASE
  WHEN node:Fact OR node:Episode OR node:ConsolidationRun THEN node.id
  WHEN node:Tombstone THEN coalesce(node.fact_id, node.episode_id)
  WHEN node:ConsolidationState THEN 'state'
  WHEN node:ConsolidationRecord
    THEN 'record:' + node.run + ':'
         + reduce(s = '', c IN coalesce(node.clusters, []) | s + toString(c) + ',')
  WHEN node:ConsolidationChange
    THEN 'change:' + node.run + ':' + toString(node.cluster) + ':' + node.fact_id
END
