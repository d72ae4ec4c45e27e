// name: access_stamp
// mode: write
// params: ns, fact_ids, episode_ids
// returns: facts, episodes
// Counts one access on each recalled fact and episode, in one write for the whole recall.
CALL () {
  UNWIND $fact_ids AS id
  MATCH (n:Fact {id: id})
  WHERE n.ns = $ns
  SET n.access_count = coalesce(n.access_count, 0) + 1,
      n.last_accessed_at = datetime.transaction()
  RETURN count(n) AS facts
}
CALL () {
  UNWIND $episode_ids AS id
  MATCH (n:Episode {id: id})
  WHERE n.ns = $ns
  SET n.access_count = coalesce(n.access_count, 0) + 1,
      n.last_accessed_at = datetime.transaction()
  RETURN count(n) AS episodes
}
RETURN facts, episodes
