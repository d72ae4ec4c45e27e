// name: forget_nodes
// mode: write
// params: ns, facts, episodes
// returns: kind, id, text, source, session_id, derived, kept_messages, same_text, at
// The facts $facts and episodes $episodes of one erasure unit that are still facts and
// episodes, locked for the rest of the transaction, with the facts derived only from those
// episodes (derived: every message they came from is erased now or was before). For each: its
// text, its source or session (hashed on its tombstone), for a fact the messages it keeps
// (not erased: they still hold the words it was extracted from) and the believed facts with
// the very same text that stay; and the erasure's time (at), taken once the nodes are locked:
// its flags, records and tombstones all carry it.
CALL () {
  UNWIND $episodes AS id
  MATCH (n:Episode {ns: $ns, id: id})
  RETURN n, 'episode' AS kind, false AS derived
  UNION
  UNWIND $facts AS id
  MATCH (n:Fact {ns: $ns, id: id})
  RETURN n, 'fact' AS kind, false AS derived
  UNION
  UNWIND $episodes AS id
  MATCH (:Episode {ns: $ns, id: id})<-[:DERIVED_FROM]-(n:Fact)
  WHERE n.ns = $ns AND NOT n.id IN $facts
    AND NOT EXISTS { MATCH (n)-[:DERIVED_FROM]->(o:Episode) WHERE NOT o.id IN $episodes }
  RETURN n, 'fact' AS kind, true AS derived
}
WITH DISTINCT n, kind, derived
SET n.graphmem_lock = true
REMOVE n.graphmem_lock
WITH n, kind, derived
WHERE n:Fact OR n:Episode
WITH n, kind, derived, [x IN $facts WHERE x <> n.id] AS others
RETURN kind, n.id AS id, coalesce(n.text, n.content) AS text, n.source AS source,
       n.session_id AS session_id, derived, datetime.statement() AS at,
       COLLECT {
         MATCH (n:Fact)-[:DERIVED_FROM]->(e:Episode)
         WHERE NOT e.id IN $episodes
         RETURN DISTINCT e.id
       } AS kept_messages,
       COLLECT {
         MATCH (same:Fact {ns: $ns, text_hash: n.text_hash})
         WHERE n:Fact AND same <> n AND same.retired_at IS NULL AND NOT same.id IN others
         RETURN same.id
       } AS same_text
