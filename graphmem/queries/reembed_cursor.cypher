// name: reembed_cursor
// mode: write
// params: key, cursor
// returns: cursor
// Records how far a re-embedding got ([pass, label, ns, last id], as strings), in the transaction that
// wrote that far, so that an interrupted run resumes after it.
MATCH (s:GraphmemSchema {key: $key})
SET s.reembedding_cursor = $cursor
RETURN s.reembedding_cursor AS cursor
