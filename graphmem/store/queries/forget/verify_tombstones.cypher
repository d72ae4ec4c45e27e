// name: verify_tombstones
// mode: read
// params: ns, target, hash
// returns: matched, tombstone
// The tombstones of the namespace a verification target names, with every property they
// hold: an erased id, else an erasure's id, else a source or a session by its keyed hash
// $hash (null: the graph has no erasure key, so nothing was ever erased in it).
CALL () {
  MATCH (t:Tombstone {ns: $ns, fact_id: $target})
  RETURN 'id' AS matched, t
  UNION
  MATCH (t:Tombstone {ns: $ns, episode_id: $target})
  RETURN 'id' AS matched, t
  UNION
  MATCH (t:Tombstone {ns: $ns})
  WHERE t.erasure = $target
  RETURN 'erasure' AS matched, t
  UNION
  MATCH (t:Tombstone {ns: $ns})
  WHERE t.source_hash = $hash
  RETURN 'source' AS matched, t
  UNION
  MATCH (t:Tombstone {ns: $ns})
  WHERE t.session_hash = $hash
  RETURN 'session' AS matched, t
}
RETURN matched, properties(t) AS tombstone
