// name: bench_bare_vector
// mode: read
// params: ns, vector, k
// returns: id, score
// The bare vector read `graphmem bench tenants` times beside recall where the index cannot
// filter inside itself (Neo4j 5.26): the index's $k nearest facts, those of the namespace
// kept. graphmem itself never runs it.
CALL db.index.vector.queryNodes('fact_embedding', $k, $vector) YIELD node, score
WITH node, score
WHERE node.ns = $ns
RETURN node.id AS id, score
