// name: open_contradictions
// mode: read
// params: ns: string, limit: integer
// returns: a_id, a_text, b_id, b_text, at, actor, reason
// example: {"ns": "demo", "limit": 100}
// Conflicts not yet resolved: CONTRADICTS edges without resolved_at between two facts that
// are both still believed.
MATCH (a:Fact {ns: $ns})-[c:CONTRADICTS]->(b:Fact {ns: $ns})
WHERE c.resolved_at IS NULL AND a.retired_at IS NULL AND b.retired_at IS NULL
RETURN a.id AS a_id, a.text AS a_text, b.id AS b_id, b.text AS b_text,
       c.at AS at, c.actor AS actor, c.reason AS reason
ORDER BY c.at DESC
LIMIT $limit
