// name: forget_key
// mode: write
// params: key
// returns: erasure_key
// The graph's erasure key, made once if the schema was applied before graphmem kept one. The
// schema node is locked (and read again) only then, so that two first erasures agree on one
// key and later ones do not queue on the node.
MATCH (s:GraphmemSchema {key: $key})
CALL (s) {
  WITH s
  WHERE s.erasure_key IS NULL
  SET s.graphmem_lock = true
  REMOVE s.graphmem_lock
  WITH s
  SET s.erasure_key = coalesce(s.erasure_key, randomUUID() + randomUUID())
  RETURN count(s) AS made
}
RETURN s.erasure_key AS erasure_key
