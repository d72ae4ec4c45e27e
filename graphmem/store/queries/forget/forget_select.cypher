// name: forget_select
// mode: read
// params: ns, ids, source, session, everything
// returns: kind, id
// What a forget names in the namespace: the facts and episodes with an id in $ids (kind
// 'tombstone' for an id already erased), the facts with source $source, the episodes of
// session $session, or with $everything every fact and episode. An id of $ids found nowhere
// is not returned.
CALL () {
  UNWIND $ids AS id
  MATCH (n:Fact {ns: $ns, id: id})
  RETURN 'fact' AS kind, n.id AS id
  UNION
  UNWIND $ids AS id
  MATCH (n:Episode {ns: $ns, id: id})
  RETURN 'episode' AS kind, n.id AS id
  UNION
  UNWIND $ids AS id
  MATCH (t:Tombstone {ns: $ns, fact_id: id})
  RETURN 'tombstone' AS kind, id
  UNION
  UNWIND $ids AS id
  MATCH (t:Tombstone {ns: $ns, episode_id: id})
  RETURN 'tombstone' AS kind, id
  UNION
  MATCH (n:Fact {ns: $ns, source: $source})
  RETURN 'fact' AS kind, n.id AS id
  UNION
  MATCH (n:Episode {ns: $ns, session_id: $session})
  RETURN 'episode' AS kind, n.id AS id
  UNION
  MATCH (n:Fact {ns: $ns})
  WHERE $everything
  RETURN 'fact' AS kind, n.id AS id
  UNION
  MATCH (n:Episode {ns: $ns})
  WHERE $everything
  RETURN 'episode' AS kind, n.id AS id
}
RETURN kind, id
ORDER BY kind, id
