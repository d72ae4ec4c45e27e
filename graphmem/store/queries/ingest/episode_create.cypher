// name: episode_create
// mode: write
// params: episodes, actor
// returns: episode
// Creates one :Episode per row of $episodes: a verbatim message with its embedding, stored by
// $actor (recorded_by) at this statement's time (taken after the namespace lock the transaction waited for). A row
// whose erasure_hash (the keyed hash of its normalised content) is a tombstone's of the
// namespace is stored as previously_forgotten with an open review flag to each such tombstone
// (the caller refused such rows earlier unless it allows them). The tombstones are looked up
// once for all rows.
CALL () {
  UNWIND $episodes AS r
  MATCH (:Tombstone {ns: r.ns, text_hash: r.erasure_hash})
  RETURN collect(DISTINCT r.erasure_hash) AS forgotten_hashes
}
UNWIND $episodes AS row
CREATE (node:Episode {
  id: row.id,
  ns: row.ns,
  content: row.content,
  content_hash: row.content_hash,
  role: row.role,
  speaker: row.speaker,
  session_id: row.session_id,
  external_id: row.external_id,
  occurred_at: row.occurred_at,
  recorded_at: datetime.statement(),
  recorded_by: $actor,
  metadata: row.metadata,
  access_count: 0,
  last_accessed_at: null,
  previously_forgotten: CASE WHEN row.erasure_hash IN forgotten_hashes THEN true END
})
WITH node, row, forgotten_hashes
CALL db.create.setNodeVectorProperty(node, 'embedding', row.embedding)
CALL (node, row, forgotten_hashes) {
  WITH node, row
  WHERE row.erasure_hash IN forgotten_hashes
  MATCH (t:Tombstone {ns: row.ns, text_hash: row.erasure_hash})
  CREATE (node)-[:FLAGGED_BY {ns: node.ns, event: 'previously_forgotten', relation: 'same_text',
                              at: datetime.statement(), actor: $actor, reason: null}]->(t)
  RETURN count(t) AS flagged
}
RETURN {{episode_map}} AS episode
