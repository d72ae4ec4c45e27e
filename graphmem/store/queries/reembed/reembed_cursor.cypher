// name: reembed_cursor
// mode: write
// params: key, token, cursor
// returns: cursor
// Records how far the re-embedding run $token got ([pass, label, ns, last id], as strings),
// in the transaction that wrote that far, so that an interrupted run resumes after it, and
// that the run is alive. No row: another run has taken the re-embedding over.
MATCH (s:GraphmemSchema {key: $key})
WHERE s.reembedding_token = $token
SET s.reembedding_cursor = $cursor,
    s.reembedding_heartbeat = datetime()
RETURN s.reembedding_cursor AS cursor
