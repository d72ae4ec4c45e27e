// name: reembed_heartbeat
// mode: write
// params: key, token
// returns: held
// Renews the lease of the re-embedding run $token, which it does while it is alive, between
// batches too (a slow batch, an index drop waiting for open writes, a catch-up read), so that
// a live run is never taken for a gone one. held is false once another run has taken over.
OPTIONAL MATCH (s:GraphmemSchema {key: $key})
WHERE s.reembedding_token = $token
SET s.reembedding_heartbeat = datetime()
RETURN s IS NOT NULL AS held
