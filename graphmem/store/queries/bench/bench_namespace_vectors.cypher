// name: bench_namespace_vectors
// mode: read
// params: ns
// returns: id, embedding
// Every fact of one namespace with its stored embedding: `graphmem bench --tenants` ranks
// them by their exact cosine similarity to each question, to judge what recall found.
MATCH (f:Fact {ns: $ns})
RETURN f.id AS id, f.embedding AS embedding
