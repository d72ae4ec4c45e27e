// args: node, side
// The node `side` ({label, key, eid}, one end of a relationship record) names among those an
// import staged in namespace $stage: by its id, erased id or run id through their indexes, or,
// for a node without one, by the element id its creation returned.
  WITH row WHERE side.label = 'Fact'
  MATCH (node:Fact {ns: $stage, id: side.key})
  RETURN node
  UNION
  WITH row WHERE side.label = 'Episode'
  MATCH (node:Episode {ns: $stage, id: side.key})
  RETURN node
  UNION
  WITH row WHERE side.label = 'Tombstone'
  MATCH (node:Tombstone {ns: $stage, fact_id: side.key})
  RETURN node
  UNION
  WITH row WHERE side.label = 'Tombstone'
  MATCH (node:Tombstone {ns: $stage, episode_id: side.key})
  RETURN node
  UNION
  WITH row WHERE side.label = 'ConsolidationRun'
  MATCH (node:ConsolidationRun {id: side.key})
  WHERE node.ns = $stage
  RETURN node
  UNION
  WITH row WHERE side.eid IS NOT NULL
  MATCH (node)
  WHERE elementId(node) = side.eid AND node.ns = $stage
  RETURN node
