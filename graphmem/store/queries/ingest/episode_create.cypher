// name: episode_create
// mode: write
// params: episodes
// returns: episode
// Creates one :Episode per row of $episodes: a verbatim message with its embedding, stored at
// this statement's time (taken after the namespace lock the transaction waited for).
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
  metadata: row.metadata,
  access_count: 0,
  last_accessed_at: null
})
WITH node, row
CALL db.create.setNodeVectorProperty(node, 'embedding', row.embedding)
RETURN {{episode_map}} AS episode
