// name: key_create
// mode: write
// params: id, name, hash, role, namespaces, prefix, created_at, expires_at
// returns: key
// Stores a new API key, its secret only as a hash. Keys carry no namespace: they are the
// service's, not a tenant's, and stay out of every namespace's listing, export and drop.
CREATE (k:GraphmemApiKey {
  id: $id,
  name: $name,
  hash: $hash,
  role: $role,
  namespaces: $namespaces,
  prefix: $prefix,
  created_at: $created_at,
  expires_at: $expires_at
})
RETURN k {.id, .name, .role, .namespaces, .prefix, .created_at, .expires_at, .revoked_at} AS key
