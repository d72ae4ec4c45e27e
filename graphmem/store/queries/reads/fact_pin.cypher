// name: fact_pin
// mode: write
// params: ns, id, pinned
// returns: fact
// Pins a fact (context puts pinned facts first) or unpins it.
MATCH (node:Fact {id: $id})
WHERE node.ns = $ns
SET node.pinned = $pinned
RETURN {{fact_map}} AS fact
