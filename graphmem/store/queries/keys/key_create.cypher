// name: key_create
// mode: write
// params: id, name, hash, role, namespaces, prefix, created_at, expires_at, mac
// returns: key
// Stores a new API key, its secret only as a hash, signed (mac) with the service secret. Keys carry no namespace: they are the
// service's, not a tenant's, and stay out of every namespace's listing, export and drop.
CREATE (k:GraphmemApiKey {
  id: $id,
  name: $name,
  hash: $hash,
  role: $role,
  namespaces: $namespaces,
  prefix: $prefix,
  created_at: $created_at,
  expires_at: $expires_at,
  mac: $mac
})
RETURN k {.id, .name, .role, .namespaces, .prefix, .created_at, .expires_at, .revoked_at} AS key
