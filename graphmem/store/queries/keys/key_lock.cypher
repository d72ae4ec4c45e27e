// name: key_lock
// mode: write
// params: key
// returns: locked
// Takes the schema node's write lock for the rest of the transaction, so that key creations
// run one at a time (two at once could both find a name free).
MATCH (s:GraphmemSchema {key: $key})
SET s.keys_lock = true
REMOVE s.keys_lock
RETURN true AS locked
