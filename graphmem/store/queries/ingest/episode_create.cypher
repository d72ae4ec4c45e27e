// name: episode_create
// mode: write
// params: episodes, actor
// returns: episode
// Creates one :Episode per row of $episodes: a verbatim message with its embedding, stored at
// this statement's time (taken after the namespace lock the transaction waited for). A row
// whose erasure_hash (the keyed hash of its normalised content) is a tombstone's of the
// namespace is stored as previously_forgotten with an open review flag to each such tombstone
// (the caller refused such rows earlier unless it allows them).
UNWIND $episodes AS row
CALL (row) {
  OPTIONAL MATCH (t:Tombstone {ns: row.ns, text_hash: row.erasure_hash})
  RETURN collect(t) AS tombstones
}
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
  metadata: row.metadata,
  access_count: 0,
  last_accessed_at: null,
  previously_forgotten: CASE WHEN size(tombstones) > 0 THEN true END
})
WITH node, row, tombstones
CALL (node, tombstones) {
  UNWIND tombstones AS t
  CREATE (node)-[:FLAGGED_BY {ns: node.ns, event: 'previously_forgotten', relation: 'same_text',
                              at: datetime.statement(), actor: $actor, reason: null}]->(t)
  RETURN count(t) AS flagged
}
CALL db.create.setNodeVectorProperty(node, 'embedding', row.embedding)
RETURN {{episode_map}} AS episode
