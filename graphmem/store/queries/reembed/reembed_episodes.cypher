// name: reembed_episodes
// mode: read
// params: ns, after, limit
// returns: id, text, speaker
// The next $limit episodes of the namespace by id after $after ('' for the first): what
// re-embedding embeds next. A seek on the (ns, id) index, in its order, so each batch reads
// only what it returns.
MATCH (n:Episode)
USING INDEX n:Episode(ns, id)
WHERE n.ns = $ns AND n.id > $after
RETURN n.id AS id, n.content AS text, n.speaker AS speaker
ORDER BY n.ns, n.id
LIMIT $limit
