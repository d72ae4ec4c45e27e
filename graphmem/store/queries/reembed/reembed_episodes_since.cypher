// name: reembed_episodes_since
// mode: read
// params: ns, since, after, limit
// returns: id, text, speaker
// The next $limit episodes of the namespace recorded at or after $since, by id after $after
// ('' for the first): what a re-embedding's catch-up pass embeds again. A seek on the
// (ns, recorded_at) index, so a pass reads only what was recorded since.
MATCH (n:Episode)
USING INDEX n:Episode(ns, recorded_at)
WHERE n.ns = $ns AND n.recorded_at >= $since AND n.id > $after
RETURN n.id AS id, n.content AS text, n.speaker AS speaker
ORDER BY n.id
LIMIT $limit
