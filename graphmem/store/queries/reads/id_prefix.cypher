// name: id_prefix
// mode: read
// params: ns, prefixes
// returns: prefix, ids
// For each id prefix, up to three full ids in the namespace that start with it: of facts,
// episodes, and facts or episodes since forgotten (their tombstones keep the id).
UNWIND $prefixes AS prefix
CALL (prefix) {
  MATCH (n:Fact)
  WHERE n.id STARTS WITH prefix AND n.ns = $ns
  RETURN n.id AS id
  UNION
  MATCH (n:Episode)
  WHERE n.id STARTS WITH prefix AND n.ns = $ns
  RETURN n.id AS id
  UNION
  MATCH (t:Tombstone)
  WHERE t.ns = $ns AND t.fact_id STARTS WITH prefix
  RETURN t.fact_id AS id
  UNION
  MATCH (t:Tombstone)
  WHERE t.ns = $ns AND t.episode_id STARTS WITH prefix
  RETURN t.episode_id AS id
}
WITH prefix, id
ORDER BY id
RETURN prefix, collect(id)[..3] AS ids
