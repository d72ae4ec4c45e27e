// name: fact_lineage
// mode: read
// params: ns: string, fact_id: string
// returns: id, kind, text, status, recorded_at, retired_at, replaced_by, how, at, actor, reason
// example: {"ns": "demo", "fact_id": "00000000-0000-0000-0000-000000000000"}
// The whole lineage of the fact $fact_id, oldest first: every fact joined to it by SUPERSEDES
// or MERGED_INTO, followed both ways and as far as they go (so also the other facts a common
// successor replaced), through facts erased since. One row per fact: kind 'fact', or
// 'forgotten' for one erased by forget (its :Tombstone: no text, its status when erased, its
// times kept);
// then the step that retired it, if any: the fact that replaced it (replaced_by), how
// ('superseded' or 'merged'), when (at), by whom (actor: 'api', 'extractor' or a consolidation
// run's id) and why (reason; erased with the text of either fact). $fact_id may name an
// erased fact. No rows when it names no fact of the namespace. fact_history is the narrower
// SUPERSEDES chain through one fact.
MATCH (start:Fact|Tombstone {ns: $ns})
WHERE start.id = $fact_id OR start.fact_id = $fact_id
OPTIONAL MATCH (start)-[:SUPERSEDES|MERGED_INTO*1..]-(other:Fact|Tombstone {ns: $ns})
WITH start, collect(DISTINCT other) AS others
UNWIND [start] + [x IN others WHERE x <> start] AS v
OPTIONAL MATCH (v)-[s:SUPERSEDES|MERGED_INTO]-(next:Fact|Tombstone {ns: $ns})
WHERE (type(s) = 'SUPERSEDES' AND startNode(s) = next)
   OR (type(s) = 'MERGED_INTO' AND startNode(s) = v)
RETURN coalesce(v.id, v.fact_id) AS id,
       CASE WHEN v:Tombstone THEN 'forgotten' ELSE 'fact' END AS kind,
       v.text AS text, coalesce(v.status, v.status_at_erasure) AS status, v.recorded_at AS recorded_at,
       v.retired_at AS retired_at, coalesce(next.id, next.fact_id) AS replaced_by,
       CASE type(s) WHEN 'SUPERSEDES' THEN 'superseded' WHEN 'MERGED_INTO' THEN 'merged' END
         AS how,
       s.at AS at, s.actor AS actor, s.reason AS reason
ORDER BY recorded_at, id
