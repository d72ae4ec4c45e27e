// name: bench_serve_facts
// mode: read
// params: prefix
// returns: id, ns, text, status, supersedes
// Every fact of the namespaces starting with $prefix, with its status and the ids of the
// facts it supersedes: `graphmem bench --serve` checks them against the writes its clients
// saw acknowledged (each stored once, nothing else stored, one active head per chain).
MATCH (f:Fact)
WHERE f.ns STARTS WITH $prefix
OPTIONAL MATCH (f)-[:SUPERSEDES]->(old:Fact)
RETURN f.id AS id, f.ns AS ns, f.text AS text, f.status AS status, collect(old.id) AS supersedes
