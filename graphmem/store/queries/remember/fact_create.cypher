// name: fact_create
// mode: write
// params: facts, actor
// returns: recorded_at, created, superseded, referenced, contradicted, valid_from_update, pinned_update, forgotten
// Creates one active :Fact per row of $facts (append-only: no merge, no overwrite), all with
// $actor as recorded_by (who created it) and this statement's time as recorded_at (taken after the locks the transaction's earlier
// statements waited for), and in the same transaction:
// SUPERSEDES to each row.supersedes (retiring those facts), REFERENCES to each row.references
// an open CONTRADICTS to each row.contradicts, and DERIVED_FROM to each row.derived_from episode. The caller has checked that the targets
// exist in the namespace and are believed.
// A superseding fact without a valid_from is valid from this statement's time (unless its
// valid_to is already past), so that the replaced fact's closed interval and its own do not
// overlap.
// Each replaced fact's valid time ends where the new fact's begins; a new fact about the past
// only (no valid_from, a past valid_to: "worked there until 2020") ends it at its own end.
// Each replaced fact keeps the valid_to it carried while believed as stated_valid_to (absent
// when open), which answers "what did we believe at T about V" after valid_to is closed.
// importance is the caller's (absent when it gave none: a null property is not stored).
// A fact that replaces a pinned fact is pinned too (pinned_update lists those not pinned by
// the caller), so a core fact stays in context when it is updated.
// A row whose erasure_hash (the keyed hash of its normalised text) is a tombstone's of the
// namespace is stored as previously_forgotten, with an open review flag to each such
// tombstone; forgotten lists those rows' ids (the caller refuses them unless it allows them,
// rolling the whole transaction back). The tombstones are looked up once for all rows.
CALL () {
  UNWIND $facts AS r
  MATCH (:Tombstone {ns: r.ns, text_hash: r.erasure_hash})
  RETURN collect(DISTINCT r.erasure_hash) AS forgotten_hashes
}
UNWIND $facts AS row
CREATE (node:Fact {
  id: row.id,
  ns: row.ns,
  text: row.text,
  text_hash: row.text_hash,
  status: 'active',
  recorded_at: datetime.statement(),
  recorded_by: $actor,
  retired_at: null,
  valid_from: CASE
    WHEN row.valid_from IS NULL AND size(row.supersedes) > 0
         AND (row.valid_to IS NULL OR row.valid_to > datetime.statement())
      THEN datetime.statement()
    ELSE row.valid_from END,
  valid_to: row.valid_to,
  superseded_by: null,
  source: row.source,
  tags: row.tags,
  metadata: row.metadata,
  pinned: row.pinned,
  importance: row.importance,
  access_count: 0,
  last_accessed_at: null,
  previously_forgotten: CASE WHEN row.erasure_hash IN forgotten_hashes THEN true END
})
WITH node, row, forgotten_hashes
CALL db.create.setNodeVectorProperty(node, 'embedding', row.embedding)
CALL (node, row) {
  UNWIND row.supersedes AS old_id
  MATCH (old:Fact {id: old_id})
  WHERE old.ns = row.ns AND old.retired_at IS NULL
  WITH node, row, old, coalesce(node.valid_from, node.valid_to) AS ended
  CREATE (node)-[:SUPERSEDES {at: datetime.statement(), actor: $actor, reason: row.reason}]->(old)
  SET old.stated_valid_to = old.valid_to,
      old.status = 'superseded',
      old.retired_at = datetime.statement(),
      old.superseded_by = node.id,
      old.valid_to = CASE
        WHEN old.valid_to IS NOT NULL AND old.valid_to <= ended THEN old.valid_to
        WHEN old.valid_from IS NOT NULL AND old.valid_from > ended THEN old.valid_from
        ELSE ended END
  RETURN count(old) AS superseded, any(pin IN collect(old.pinned) WHERE pin) AS was_pinned
}
FOREACH (_ IN CASE WHEN was_pinned AND NOT row.pinned THEN [1] ELSE [] END |
  SET node.pinned = true)
WITH node, row, superseded, was_pinned, forgotten_hashes
CALL (node, row) {
  UNWIND row.references AS ref_id
  MATCH (ref:Fact {id: ref_id})
  WHERE ref.ns = row.ns
  CREATE (node)-[:REFERENCES {at: datetime.statement(), actor: $actor, reason: row.reason}]->(ref)
  RETURN count(ref) AS referenced
}
CALL (node, row) {
  UNWIND row.contradicts AS other_id
  MATCH (other:Fact {id: other_id})
  WHERE other.ns = row.ns AND other.retired_at IS NULL
  CREATE (node)-[:CONTRADICTS {at: datetime.statement(), actor: $actor, reason: row.reason}]->(other)
  RETURN count(other) AS contradicted
}
CALL (node, row) {
  UNWIND row.derived_from AS episode_id
  MATCH (e:Episode {id: episode_id})
  WHERE e.ns = row.ns
  CREATE (node)-[:DERIVED_FROM {at: datetime.statement(), actor: $actor, reason: null}]->(e)
  RETURN count(e) AS derived
}
WITH forgotten_hashes, count(node) AS created,
     sum(superseded) AS superseded, sum(referenced) AS referenced,
     sum(contradicted) AS contradicted,
     collect(CASE WHEN row.valid_from IS NULL AND node.valid_from IS NOT NULL
                  THEN node.id END) AS valid_from_update,
     collect(CASE WHEN was_pinned AND NOT row.pinned THEN node.id END) AS pinned_update
CALL (forgotten_hashes) {
  UNWIND $facts AS r
  WITH r
  WHERE r.erasure_hash IN forgotten_hashes
  MATCH (node:Fact {id: r.id})
  MATCH (t:Tombstone {ns: r.ns, text_hash: r.erasure_hash})
  CREATE (node)-[:FLAGGED_BY {ns: r.ns, event: 'previously_forgotten', relation: 'same_text',
                              at: datetime.statement(), actor: $actor, reason: null}]->(t)
  RETURN collect(DISTINCT {id: r.id, erased: coalesce(t.fact_id, t.episode_id)}) AS forgotten
}
RETURN datetime.statement() AS recorded_at, created, superseded, referenced, contradicted,
       valid_from_update, pinned_update, forgotten
