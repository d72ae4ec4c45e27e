// name: fact_history
// mode: read
// params: ns: string, fact_id: string
// returns: id, text, status, recorded_at, retired_at, replaced_by, replaced_at, actor, reason
// example: {"ns": "demo", "fact_id": "00000000-0000-0000-0000-000000000000"}
// The SUPERSEDES chain through one fact, oldest first: every version, when it was recorded
// and retired, which fact replaced it, when, by whom ('api' for the client and CLI,
// 'extractor', or a run id) and why. Only facts are listed: a version erased by forget is left
// out, and so is the step from it (fact_lineage shows it, without its words).
MATCH (start:Fact {ns: $ns, id: $fact_id})
OPTIONAL MATCH (start)-[:SUPERSEDES*0..]->(older:Fact {ns: $ns})
OPTIONAL MATCH (newer:Fact {ns: $ns})-[:SUPERSEDES*0..]->(start)
WITH collect(DISTINCT older) + collect(DISTINCT newer) AS versions
UNWIND versions AS v
WITH DISTINCT v
OPTIONAL MATCH (replacement:Fact {ns: $ns})-[s:SUPERSEDES]->(v)
RETURN v.id AS id, v.text AS text, v.status AS status, v.recorded_at AS recorded_at,
       v.retired_at AS retired_at, replacement.id AS replaced_by, s.at AS replaced_at,
       s.actor AS actor, s.reason AS reason
ORDER BY v.recorded_at
