// name: forget_erase
// mode: write
// params: ns, facts, episodes, reason, actor, erasure, at
// returns: facts, episodes, at
// Erases each fact of $facts and episode of $episodes (id, text_hash: the keyed hash of its
// normalised text, source_hash or session_hash), locked and checked by forget_nodes in this
// transaction: the node loses its label and every property (text, embedding, tags, metadata,
// hashes, times of use), so it leaves both indexes, and becomes a :Tombstone holding the
// namespace, the erased id, the keyed hashes, when it was recorded (and retired), when it was
// erased ($at, the erasure's time), why, by whom and in which erasure. Its relationships stay
// (the graph's skeleton), but their free text goes: reasons, resolutions and closing reasons on
// the edges it had, the reasons copied from them (edges a merge carried down its chain of
// survivors, review flags that name it as the fact that replaced their cause) and the reasons on
// the consolidation changes that recorded its state (the review flags this erasure made keep its
// reason).
CALL () {
  UNWIND $facts AS row
  MATCH (n:Fact {ns: $ns, id: row.id})
  CALL (n) {
    MATCH (n)-[r]-()
    WHERE (r.reason IS NOT NULL OR r.resolution IS NOT NULL OR r.closing_reason IS NOT NULL)
      AND NOT (type(r) = 'FLAGGED_BY' AND r.event = 'forgotten' AND r.actor = $actor)
    SET r.reason = null, r.resolution = null, r.closing_reason = null
    RETURN count(r) AS edges
  }
  CALL (n) {
    // Copies of its reasons elsewhere: edges a merge carried from it (or from a survivor it
    // was carried to) to the survivors down its MERGED_INTO chain, and review flags whose
    // cause it replaced or absorbed (by: it).
    CALL (n) {
      MATCH (n)-[:MERGED_INTO*1..]->(s:Fact)-[r]-()
      WHERE r.carried_from IS NOT NULL AND r.carried_from <> s.id
      RETURN r
      UNION
      MATCH (n)-[:SUPERSEDES]->(:Fact)<-[r:FLAGGED_BY]-()
      WHERE r.by = n.id
      RETURN r
      UNION
      MATCH (n)<-[:MERGED_INTO]-(:Fact)<-[r:FLAGGED_BY]-()
      WHERE r.by = n.id
      RETURN r
    }
    SET r.reason = null
    RETURN count(r) AS copies
  }
  CALL (n) {
    MATCH (c:ConsolidationChange {ns: $ns, fact_id: n.id})
    SET c.before_retraction_reason = null, c.after_retraction_reason = null
    RETURN count(c) AS changes
  }
  REMOVE n:Fact
  SET n = {ns: $ns, kind: 'fact', fact_id: row.id, text_hash: row.text_hash,
           source_hash: row.source_hash, recorded_at: n.recorded_at, retired_at: n.retired_at,
           status_at_erasure: n.status, at: $at, reason: $reason,
           actor: $actor, erasure: $erasure}
  SET n:Tombstone
  RETURN count(n) AS facts
}
CALL () {
  UNWIND $episodes AS row
  MATCH (n:Episode {ns: $ns, id: row.id})
  CALL (n) {
    MATCH (n)-[r]-()
    WHERE (r.reason IS NOT NULL OR r.closing_reason IS NOT NULL)
      AND NOT (type(r) = 'FLAGGED_BY' AND r.event = 'forgotten' AND r.actor = $actor)
    SET r.reason = null, r.closing_reason = null
    RETURN count(r) AS edges
  }
  REMOVE n:Episode
  SET n = {ns: $ns, kind: 'episode', episode_id: row.id, text_hash: row.text_hash,
           session_hash: row.session_hash, recorded_at: n.recorded_at,
           occurred_at: n.occurred_at, at: $at, reason: $reason,
           actor: $actor, erasure: $erasure}
  SET n:Tombstone
  RETURN count(n) AS episodes
}
RETURN facts, episodes, $at AS at
