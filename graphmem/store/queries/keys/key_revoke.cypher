// name: key_revoke
// mode: write
// params: name, at
// returns: key
// Revokes the live keys with this name or id (a revoked key stays, for the audits that name
// it); returns each key revoked now.
MATCH (k:GraphmemApiKey)
WHERE (k.name = $name OR k.id = $name) AND k.revoked_at IS NULL
SET k.revoked_at = $at
RETURN k {.id, .name, .role, .namespaces, .prefix, .created_at, .expires_at, .revoked_at} AS key
ORDER BY k.created_at
