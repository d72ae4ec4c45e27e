// name: fact_fulltext_search
// mode: read
// params: ns, query, candidates, k
// returns: id, text, status, score
// Best fulltext (Lucene) matches among the active facts of one namespace. $query must be
// escaped Lucene syntax (see graphmem.fulltext.lucene_query).
CALL db.index.fulltext.queryNodes('fact_text', $query, {limit: $candidates})
YIELD node, score
WHERE node.ns = $ns AND node.status = 'active'
RETURN node.id AS id, node.text AS text, node.status AS status, score
ORDER BY score DESC
LIMIT $k
