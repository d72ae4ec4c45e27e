// name: access_stamp
// mode: write
// params: ns, fact_ids, episode_ids
// returns: facts, episodes
// Counts one access on each recalled fact and episode, in one write for the whole recall.
// last_accessed_at is set first, which takes the node's write lock before access_count is
// read: a count read before the lock, while a write that holds it links a new fact to the
// node, makes Neo4j fail this transaction as deadlocked.
CALL () {
  UNWIND $fact_ids AS id
  MATCH (n:Fact {id: id})
  WHERE n.ns = $ns
  SET n.last_accessed_at = datetime.transaction()
  WITH n
  SET n.access_count = coalesce(n.access_count, 0) + 1
  RETURN count(n) AS facts
}
CALL () {
  UNWIND $episode_ids AS id
  MATCH (n:Episode {id: id})
  WHERE n.ns = $ns
  SET n.last_accessed_at = datetime.transaction()
  WITH n
  SET n.access_count = coalesce(n.access_count, 0) + 1
  RETURN count(n) AS episodes
}
RETURN facts, episodes
