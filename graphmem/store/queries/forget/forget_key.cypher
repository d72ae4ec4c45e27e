// name: forget_key
// mode: write
// params: key
// returns: erasure_key
// The graph's erasure key, made once if the schema was applied before graphmem kept one
// (written only then, so concurrent erasures do not queue on the schema node).
MATCH (s:GraphmemSchema {key: $key})
FOREACH (_ IN CASE WHEN s.erasure_key IS NULL THEN [1] ELSE [] END |
  SET s.erasure_key = randomUUID() + randomUUID())
RETURN s.erasure_key AS erasure_key
