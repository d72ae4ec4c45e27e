// name: key_find
// mode: read
// params: id
// returns: key, hash, mac
// One API key by its public id, with the hash its secret must match and its MAC.
MATCH (k:GraphmemApiKey {id: $id})
RETURN k {.id, .name, .role, .namespaces, .prefix, .created_at, .expires_at, .revoked_at} AS key,
       k.hash AS hash, k.mac AS mac
