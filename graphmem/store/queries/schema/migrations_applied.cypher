// name: migrations_applied
// mode: read
// params:
// returns: version, name, checksum, applied_at
// The schema migrations recorded in the graph, oldest first.
MATCH (m:GraphmemMigration)
RETURN m.version AS version, m.name AS name, m.checksum AS checksum, m.applied_at AS applied_at
ORDER BY version
