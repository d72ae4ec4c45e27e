// name: key_name_taken
// mode: read
// params: name, now
// returns: taken
// Whether a key that is neither revoked nor expired has this name: the name is the actor of
// the key's changes, so two live keys must not share it.
OPTIONAL MATCH (k:GraphmemApiKey {name: $name})
WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $now)
RETURN count(k) > 0 AS taken
