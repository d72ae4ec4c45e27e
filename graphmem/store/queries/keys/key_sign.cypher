// name: key_sign
// mode: write
// params: signs
// returns: key
// Stores new MACs ({id, old, mac}): each only on the key whose MAC is still the one read
// (old: null for a key without one), so that nothing changed since is signed.
UNWIND $signs AS s
MATCH (k:GraphmemApiKey {id: s.id})
WHERE (s.old IS NULL AND k.mac IS NULL) OR k.mac = s.old
SET k.mac = s.mac
RETURN k {.id, .name, .role, .namespaces, .prefix, .created_at, .expires_at, .revoked_at} AS key
