// name: import_sweep
// mode: write
// params: prefix, pattern, batch: integer
// returns: deleted
// Deletes up to $batch nodes of the staging namespaces of imports into one namespace (their ns
// starts with $prefix and matches $pattern: '~import:<namespace>:<token>'), whatever labels
// they carry, with their relationships: what a failed or killed import staged is removed even
// if its labels are not graphmem's. No index holds every label, so this reads every node
// (once per batch); imports and drops only, run again until it deletes nothing. No namespace
// a caller may name starts with '~', so no tenant's node is ever matched.
MATCH (n)
WHERE n.ns STARTS WITH $prefix AND n.ns =~ $pattern
WITH n
LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
