// name: import_nodes
// mode: write
// params: rows
// returns: key, eid
// Creates one node per row of a namespace import, in its staging namespace (row.properties
// carries it as ns): its labels, its plain properties, each typed one read back from the text
// Neo4j wrote (typed_value), and each vector through db.create.setNodeVectorProperty, as
// graphmem writes embeddings. Returns each row's key with the new node's element id.
UNWIND $rows AS row
CREATE (n:$(row.labels))
SET n = row.properties
FOREACH (t IN row.typed | SET n[t.key] = {{typed_value(t)}})
WITH n, row
CALL (n, row) {
  UNWIND row.vectors AS v
  CALL db.create.setNodeVectorProperty(n, v.key, v.values)
  RETURN count(*) AS vectors
}
RETURN row.key AS key, elementId(n) AS eid
