// name: fact_get
// mode: read
// params: ns, ids
// returns: fact
// The facts with these ids in the namespace.
UNWIND $ids AS id
MATCH (node:Fact {id: id})
WHERE node.ns = $ns
RETURN {{fact_map}} AS fact
