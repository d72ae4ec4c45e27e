// name: recall_fact_fulltext_all
// mode: read
// params: ns, query, pool, as_of, valid_at, include_retired, tags, since, until
// returns: id, score
// Every fulltext match, filtered: the fallback when over-fetching was not enough.
CALL db.index.fulltext.queryNodes('fact_text', $query)
YIELD node, score
WITH node, score
WHERE {{fact_visible}}
RETURN node.id AS id, score
ORDER BY score DESC
LIMIT $pool
