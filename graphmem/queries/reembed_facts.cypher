// name: reembed_facts
// mode: read
// params: ns, after, since, limit
// returns: id, text
// The next $limit facts of the namespace by id after $after (null: from the first), only those
// recorded at or after $since when it is given: what re-embedding embeds next.
MATCH (n:Fact {ns: $ns})
WHERE ($after IS NULL OR n.id > $after) AND ($since IS NULL OR n.recorded_at >= $since)
RETURN n.id AS id, n.text AS text
ORDER BY n.id
LIMIT $limit
