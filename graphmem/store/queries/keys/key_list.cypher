// name: key_list
// mode: read
// params: include_revoked: boolean
// returns: key, hash, mac
// Every API key with its hash and MAC (to tell whether it is signed), revoked ones only when
// asked for, oldest first.
MATCH (k:GraphmemApiKey)
WHERE $include_revoked OR k.revoked_at IS NULL
RETURN k {.id, .name, .role, .namespaces, .prefix, .created_at, .expires_at, .revoked_at} AS key,
       k.hash AS hash, k.mac AS mac
ORDER BY k.created_at, k.id
