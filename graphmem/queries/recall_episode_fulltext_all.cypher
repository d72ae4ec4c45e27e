// name: recall_episode_fulltext_all
// mode: read
// params: ns, query, pool, as_of, valid_at, since, until
// returns: id, score
// Every fulltext match, filtered: the fallback when over-fetching was not enough.
CALL db.index.fulltext.queryNodes('episode_content', $query)
YIELD node, score
WITH node, score
WHERE {{episode_visible}}
RETURN node.id AS id, score
ORDER BY score DESC
LIMIT $pool
