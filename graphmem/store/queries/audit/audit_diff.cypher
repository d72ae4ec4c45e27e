// name: audit_diff
// mode: read
// params: ns, since, until
// returns: believed, retired, contradictions
// What changed after $since up to and including $until: facts recorded then, with who created
// them (a fact erased since with a null text), facts retired then and how (superseded, merged, retracted: with
// the replacing fact, the actor and the reason; a retired fact erased since as its
// status_at_erasure) and the CONTRADICTS edges opened or resolved then. Each label is read
// through its (ns, time) index.
CALL () {
  CALL () {
    MATCH (f:Fact {ns: $ns})
    WHERE f.recorded_at > $since AND f.recorded_at <= $until
    RETURN f
    UNION
    MATCH (f:Tombstone {ns: $ns})
    WHERE f.kind = 'fact' AND f.recorded_at > $since AND f.recorded_at <= $until
    RETURN f
  }
  WITH f ORDER BY f.recorded_at, coalesce(f.id, f.fact_id)
  RETURN collect({fact_id: coalesce(f.id, f.fact_id), text: f.text, change: 'recorded',
                  at: f.recorded_at, actor: f.recorded_by,
                  valid_from: CASE WHEN f.valid_from_set_at IS NULL THEN f.valid_from END,
                  valid_to: CASE WHEN f.status = 'superseded' THEN f.stated_valid_to
                                 ELSE f.valid_to END}) AS believed
}
CALL () {
  CALL () {
    MATCH (f:Fact {ns: $ns})
    WHERE f.retired_at > $since AND f.retired_at <= $until
    RETURN f
    UNION
    MATCH (f:Tombstone {ns: $ns})
    WHERE f.kind = 'fact' AND f.retired_at > $since AND f.retired_at <= $until
    RETURN f
  }
  // A retired fact has one replacement; a tombstone no longer says which (superseded_by went
  // with its other properties), its skeleton's edge does.
  OPTIONAL MATCH (newer)-[s:SUPERSEDES]->(f)
  WHERE newer.ns = $ns AND (f:Tombstone OR coalesce(newer.id, newer.fact_id) = f.superseded_by)
  OPTIONAL MATCH (f)-[m:MERGED_INTO]->(survivor)
  WHERE survivor.ns = $ns
  WITH f, coalesce(f.status, f.status_at_erasure) AS how, s, m,
       coalesce(newer, survivor) AS by
  WITH f, how, by, CASE how WHEN 'superseded' THEN s WHEN 'merged' THEN m END AS edge
  ORDER BY f.retired_at, coalesce(f.id, f.fact_id)
  RETURN collect({fact_id: coalesce(f.id, f.fact_id), text: f.text, change: how,
                  at: f.retired_at, valid_from: f.valid_from, valid_to: f.valid_to,
                  by: coalesce(by.id, by.fact_id), by_text: by.text,
                  actor: CASE how WHEN 'retracted' THEN f.retracted_by ELSE edge.actor END,
                  reason: CASE how WHEN 'retracted' THEN f.retraction_reason
                               ELSE edge.reason END}) AS retired
}
CALL () {
  CALL () {
    MATCH (a:Fact|Tombstone {ns: $ns})-[c:CONTRADICTS]->(b:Fact|Tombstone {ns: $ns})
    WHERE c.at > $since AND c.at <= $until
    RETURN a, c, b
    UNION
    MATCH (a:Fact|Tombstone {ns: $ns})-[c:CONTRADICTS]->(b:Fact|Tombstone {ns: $ns})
    WHERE c.resolved_at > $since AND c.resolved_at <= $until
    RETURN a, c, b
  }
  WITH a, c, b ORDER BY c.at, coalesce(a.id, a.fact_id)
  RETURN collect({{contradiction_map(a, c, b)}}) AS contradictions
}
RETURN believed, retired, contradictions
