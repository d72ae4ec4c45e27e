// name: audit_lineage
// mode: read
// params: ns, id
// returns: facts, forgotten, steps, contradictions, references, flags, retractions, tiers
// The lineage of the fact $id (a :Fact, or a :Tombstone once forgotten): every fact joined
// to it by SUPERSEDES or MERGED_INTO, either way and through forgotten ones, with the edges
// between them, the CONTRADICTS and REFERENCES edges and the review flags that touch them,
// their retractions, and the tier moves consolidation runs made to them (with the run's undo,
// if it was undone). One row of empty lists when $id names no fact of the namespace.
MATCH (start:Fact|Tombstone {ns: $ns})
WHERE start.id = $id OR (start.fact_id = $id AND start.kind = 'fact')
OPTIONAL MATCH (start)-[:SUPERSEDES|MERGED_INTO*1..]-(other:Fact|Tombstone)
WITH start, collect(DISTINCT other) AS others
WITH [start] + [x IN others WHERE x.ns = $ns AND x <> start] AS line
UNWIND line AS node
WITH line, node
ORDER BY coalesce(node.recorded_at, node.at)
RETURN
  [n IN collect(CASE WHEN node:Fact THEN {{fact_map}} END) WHERE n IS NOT NULL] AS facts,
  [n IN collect(CASE WHEN node:Tombstone THEN {{tombstone_map(node)}} END)
   WHERE n IS NOT NULL] AS forgotten,
  reduce(all = [], items IN collect(COLLECT {
    MATCH (node)-[r:SUPERSEDES|MERGED_INTO]->(older)
    WHERE older IN line
    RETURN {type: type(r), newer: coalesce(node.id, node.fact_id),
            older: coalesce(older.id, older.fact_id), at: r.at, actor: r.actor,
            reason: r.reason} AS step
  }) | all + items) AS steps,
  reduce(all = [], items IN collect(COLLECT {
    MATCH (node)-[c:CONTRADICTS]-(other)
    WHERE other.ns = $ns
    WITH c, startNode(c) AS a, endNode(c) AS b
    RETURN {{contradiction_map(a, c, b)}} AS edge
  }) | all + items) AS contradictions,
  reduce(all = [], items IN collect(COLLECT {
    MATCH (node)-[r:REFERENCES]-(other)
    WHERE other.ns = $ns
    WITH r, startNode(r) AS a, endNode(r) AS b
    RETURN {from: coalesce(a.id, a.fact_id), from_text: a.text, to: coalesce(b.id, b.fact_id),
            to_text: b.text, at: r.at, actor: r.actor, reason: r.reason} AS edge
  }) | all + items) AS references,
  reduce(all = [], items IN collect(COLLECT {
    MATCH (node)-[x:FLAGGED_BY]->(cause)
    WHERE cause.ns = $ns
    RETURN {flagged: coalesce(node.id, node.fact_id),
            cause: coalesce(cause.id, cause.fact_id, cause.episode_id),
            cause_text: coalesce(cause.text, cause.content), event: x.event,
            relation: x.relation, at: x.at, actor: x.actor, reason: x.reason,
            closed_at: x.closed_at, closed_by: x.closed_by, closing: x.closing,
            closing_reason: x.closing_reason} AS flag
  }) | all + items) AS flags,
  reduce(all = [], items IN collect(COLLECT {
    MATCH (c:ConsolidationChange {ns: $ns, fact_id: coalesce(node.id, node.fact_id)})
    WHERE coalesce(c.before_tier, 'warm') <> coalesce(c.after_tier, 'warm')
    OPTIONAL MATCH (r:ConsolidationRun {id: c.run})
    WHERE r.ns = $ns
    RETURN {fact_id: c.fact_id, at: c.at, actor: c.run, reason: c.reason,
            before: coalesce(c.before_tier, 'warm'), after: coalesce(c.after_tier, 'warm'),
            undone_at: r.undone_at, undone_by: r.undone_by} AS move
  }) | all + items) AS tiers,
  [n IN collect(CASE WHEN coalesce(node.status, node.status_at_erasure) = 'retracted'
                     THEN {fact_id: coalesce(node.id, node.fact_id), at: node.retired_at,
                           actor: node.retracted_by, reason: node.retraction_reason} END)
   WHERE n IS NOT NULL] AS retractions
