// name: import_stages
// mode: read
// params: prefix
// returns: stage
// The staging namespaces whose name starts with $prefix (an import's into one namespace, left
// by an import that did not finish, or under way): found through the ns indexes, whose range
// seeks answer a prefix.
CALL () {
  MATCH (n:Fact) WHERE n.ns STARTS WITH $prefix RETURN DISTINCT n.ns AS stage
  UNION
  MATCH (n:Episode) WHERE n.ns STARTS WITH $prefix RETURN DISTINCT n.ns AS stage
  UNION
  MATCH (n:Tombstone) WHERE n.ns STARTS WITH $prefix AND n.at IS NOT NULL
  RETURN DISTINCT n.ns AS stage
  UNION
  MATCH (n:ConsolidationRun) WHERE n.ns STARTS WITH $prefix AND n.started_at IS NOT NULL
  RETURN DISTINCT n.ns AS stage
  UNION
  MATCH (n:ConsolidationState) WHERE n.ns STARTS WITH $prefix RETURN DISTINCT n.ns AS stage
  UNION
  MATCH (n:ConsolidationRecord) WHERE n.ns STARTS WITH $prefix RETURN DISTINCT n.ns AS stage
  UNION
  MATCH (n:ConsolidationChange) WHERE n.ns STARTS WITH $prefix AND n.run IS NOT NULL
  RETURN DISTINCT n.ns AS stage
}
RETURN stage
ORDER BY stage
