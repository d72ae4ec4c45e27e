// name: guard_tombstone_hashes
// mode: read
// params: hashes
// returns: found
// Whether any of $hashes (64-digit hex strings a guarded read returned) is a tombstone's keyed
// hash, in any namespace: such a result is refused.
OPTIONAL MATCH (t:Tombstone)
WHERE t.text_hash IN $hashes OR t.source_hash IN $hashes OR t.session_hash IN $hashes
RETURN count(t) > 0 AS found
