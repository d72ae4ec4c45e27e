// name: migration_record
// mode: write
// params: version, name, checksum
// returns: version
// Records that a schema migration has been applied (idempotent).
MERGE (m:GraphmemMigration {version: $version})
  ON CREATE SET m.name = $name, m.checksum = $checksum, m.applied_at = datetime()
RETURN m.version AS version
