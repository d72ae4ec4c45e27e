// name: reembed_facts_since
// mode: read
// params: ns, since, after, limit
// returns: id, text
// The next $limit facts of the namespace recorded at or after $since, by id after $after
// ('' for the first): what a re-embedding's catch-up pass embeds again. A seek on the
// (ns, recorded_at) index, so a pass reads only what was recorded since.
MATCH (n:Fact)
USING INDEX n:Fact(ns, recorded_at)
WHERE n.ns = $ns AND n.recorded_at >= $since AND n.id > $after
RETURN n.id AS id, n.text AS text
ORDER BY n.id
LIMIT $limit
