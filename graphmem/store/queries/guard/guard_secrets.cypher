// name: guard_secrets
// mode: read
// params:
// returns: secrets
// The secret values no guarded read may return, read in that read's own transaction: the
// erasure key and each API key's hash and MAC (the keys' properties read by name through a
// list, so that a graph whose keys have no MAC yet raises no unknown-property warning).
CALL () {
  OPTIONAL MATCH (s:GraphmemSchema)
  RETURN collect(s.erasure_key) AS keys
}
CALL () {
  OPTIONAL MATCH (k:GraphmemApiKey)
  UNWIND ['hash', 'mac'] AS name
  RETURN collect(k[name]) AS hashes
}
RETURN keys + hashes AS secrets
