// name: import_edges
// mode: write
// params: stage, rows
// returns: created
// Creates one relationship per row of a namespace import between two nodes it staged in
// namespace $stage (staged_node finds each end): its type, its plain properties and each
// typed one read back exactly. A row whose end is not staged creates nothing, so created
// falls short of the rows (the caller refuses the import).
UNWIND $rows AS row
CALL (row) {
  {{staged_node(a, row.start)}}
}
CALL (row) {
  {{staged_node(b, row.end)}}
}
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.properties
FOREACH (t IN row.typed | SET r[t.key] = {{typed_value(t)}})
RETURN count(r) AS created
