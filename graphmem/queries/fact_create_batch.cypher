// name: fact_create_batch
// mode: write
// params: facts
// returns: id
// Creates one active :Fact per row of $facts (append-only: no merge, no overwrite). Each row
// carries id, ns, text, text_hash, embedding, source, tags, valid_from, valid_to; the
// embedding is stored as a float32 vector property.
UNWIND $facts AS row
CREATE (f:Fact {
  id: row.id,
  ns: row.ns,
  text: row.text,
  text_hash: row.text_hash,
  status: 'active',
  recorded_at: datetime(),
  retired_at: null,
  valid_from: row.valid_from,
  valid_to: row.valid_to,
  superseded_by: null,
  source: row.source,
  tags: row.tags,
  access_count: 0,
  last_accessed_at: null
})
WITH f, row
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)
RETURN f.id AS id
