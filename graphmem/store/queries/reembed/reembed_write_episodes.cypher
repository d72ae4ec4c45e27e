// name: reembed_write_episodes
// mode: write
// params: ns, rows
// returns: written
// Replaces the embedding of each episode of $rows (row.id, row.embedding) in the namespace.
UNWIND $rows AS row
MATCH (n:Episode {ns: $ns, id: row.id})
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(n) AS written
