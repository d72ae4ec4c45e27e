// name: reembed_facts
// mode: read
// params: ns, after, limit
// returns: id, text
// The next $limit facts of the namespace by id after $after ('' for the first): what
// re-embedding embeds next. A seek on the (ns, id) index, in its order, so each batch reads
// only what it returns.
MATCH (n:Fact)
USING INDEX n:Fact(ns, id)
WHERE n.ns = $ns AND n.id > $after
RETURN n.id AS id, n.text AS text
ORDER BY n.ns, n.id
LIMIT $limit
