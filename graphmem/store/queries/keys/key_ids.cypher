// name: key_ids
// mode: read
// params: limit
// returns: id
// The ids of the API key nodes (revoked ones too), at most $limit: what a server keeps in
// memory to refuse made-up key ids without reading the graph for each.
MATCH (k:GraphmemApiKey)
RETURN k.id AS id
LIMIT $limit
