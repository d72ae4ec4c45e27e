// name: bench_bare_create
// mode: write
// params: facts, actor
// returns: created, superseded
// The bare baseline of `graphmem bench`: the graph fact_create makes of the benchmark's
// facts, written by one plain statement with nothing else. One :Fact per row of $facts with
// the properties fact_create gives a new fact (the same names and values; nulls left out as
// Neo4j leaves them out; $actor as recorded_by; this statement's time as recorded_at, and as
// valid_from of a fact that supersedes another) and its embedding set the same way; for a row that supersedes,
// the SUPERSEDES edge and the replaced fact retired with the values fact_create gives it
// when neither fact has a valid time (the benchmark's never do). No embedder check, text
// locks, tombstone lookup, checks of the replaced facts, references, contradictions,
// provenance, review flags or rows returned per fact. The benchmark writes the same facts
// through remember_many and through this, into two namespaces, and reports the ratio of the
// two rates. graphmem itself never runs it.
UNWIND $facts AS row
CREATE (node:Fact {
  id: row.id,
  ns: row.ns,
  text: row.text,
  text_hash: row.text_hash,
  status: 'active',
  recorded_at: datetime.statement(),
  recorded_by: $actor,
  valid_from: CASE WHEN row.valid_from IS NULL AND size(row.supersedes) > 0
                   THEN datetime.statement() ELSE row.valid_from END,
  valid_to: row.valid_to,
  source: row.source,
  tags: row.tags,
  metadata: row.metadata,
  pinned: row.pinned,
  access_count: 0
})
WITH node, row
CALL db.create.setNodeVectorProperty(node, 'embedding', row.embedding)
CALL (node, row) {
  UNWIND row.supersedes AS old_id
  MATCH (old:Fact {id: old_id})
  CREATE (node)-[:SUPERSEDES {at: datetime.statement(), actor: $actor, reason: row.reason}]->(old)
  SET old.status = 'superseded',
      old.retired_at = datetime.statement(),
      old.superseded_by = node.id,
      old.valid_to = node.valid_from
  RETURN count(old) AS superseded
}
RETURN count(node) AS created, sum(superseded) AS superseded
