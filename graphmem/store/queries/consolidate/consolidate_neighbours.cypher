// name: consolidate_neighbours
// mode: read
// params: ns, ids
// returns: id, near
// For each fact of $ids, the facts that rewriting it may read or change besides itself: those
// a relationship joins it to, and those derived from one of the messages it was derived
// from. Clusters whose facts share none of these can be rewritten by the same statements.
UNWIND $ids AS id
MATCH (f:Fact {id: id})
WHERE f.ns = $ns
RETURN id, COLLECT {
  MATCH (f)--(o:Fact)
  RETURN o.id AS near
  UNION
  MATCH (f)-[:DERIVED_FROM]->(:Episode)<-[:DERIVED_FROM]-(o:Fact)
  RETURN o.id AS near
} AS near
