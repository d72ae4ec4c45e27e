// name: summary_members
// mode: write
// params: ns, ids
// returns: id
// Locks the facts $ids and returns those still believed and in no believed summary: the
// members a summary may still cover.
MATCH (f:Fact {ns: $ns})
WHERE f.id IN $ids
SET f.graphmem_lock = true
REMOVE f.graphmem_lock
WITH f
WHERE f.retired_at IS NULL
  AND NOT EXISTS {
    MATCH (s:Fact)-[:SUMMARIZES]->(f)
    WHERE s.ns = $ns AND s.retired_at IS NULL
  }
RETURN f.id AS id
