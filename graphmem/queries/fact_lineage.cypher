// name: fact_lineage
// mode: read
// params: ns, id
// returns: facts, edges
// Every fact connected to $id through SUPERSEDES, in either direction, and those edges with
// their times, actors and reasons.
MATCH (start:Fact {id: $id})
WHERE start.ns = $ns
OPTIONAL MATCH (start)-[:SUPERSEDES*1..]-(other:Fact)
WITH start, [x IN collect(DISTINCT other) WHERE x.ns = $ns] AS others
WITH [start] + others AS chain
UNWIND chain AS node
OPTIONAL MATCH (node)-[r:SUPERSEDES]->(older:Fact)
WHERE older IN chain
WITH node, collect(CASE WHEN r IS NULL THEN null ELSE {newer_id: node.id, older_id: older.id,
                        at: r.at, actor: r.actor, reason: r.reason} END) AS out
RETURN collect({{fact_map}}) AS facts, reduce(all = [], edges IN collect(out) | all + edges) AS edges
