// name: fact_lineage
// mode: read
// params: ns, id
// returns: facts, edges
// The SUPERSEDES chain through $id: the facts it replaced, directly or not, and the facts that
// replaced it, directly or not (not the other facts those replaced: a fact's history is its
// own line), with the edges between them: their times, actors and reasons. As
// cypher/fact_history.cypher lists it.
MATCH (start:Fact {id: $id})
WHERE start.ns = $ns
OPTIONAL MATCH (start)-[:SUPERSEDES*1..]->(older:Fact)
WITH start, collect(DISTINCT older) AS olders
OPTIONAL MATCH (newer:Fact)-[:SUPERSEDES*1..]->(start)
WITH start, olders, collect(DISTINCT newer) AS newers
WITH [start] + [x IN olders + newers WHERE x.ns = $ns] AS chain
UNWIND chain AS node
OPTIONAL MATCH (node)-[r:SUPERSEDES]->(older:Fact)
WHERE older IN chain
WITH node, collect(CASE WHEN r IS NULL THEN null ELSE {newer_id: node.id, older_id: older.id,
                        at: r.at, actor: r.actor, reason: r.reason} END) AS out
RETURN collect({{fact_map}}) AS facts, reduce(all = [], edges IN collect(out) | all + edges) AS edges
