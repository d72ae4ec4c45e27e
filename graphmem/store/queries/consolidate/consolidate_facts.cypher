// name: consolidate_facts
// mode: read
// params: ns, ids
// returns: id, fact, forgotten, edges
// The facts a cluster shows (with whether a tombstone says the id was forgotten; their times
// as epoch_time gives them) and the SUPERSEDES, CONTRADICTS, REFERENCES and MERGED_INTO edges
// among them.
UNWIND $ids AS id
OPTIONAL MATCH (f:Fact {id: id})
WHERE f.ns = $ns
OPTIONAL MATCH (t:Tombstone {ns: $ns, fact_id: id})
WITH id, f, count(t) > 0 AS forgotten
RETURN id, f {.id, .ns, .text, .status, .source, recorded_at: {{epoch_time(f.recorded_at)}},
              valid_from: {{epoch_time(f.valid_from)}}, valid_to: {{epoch_time(f.valid_to)}}} AS fact,
       forgotten,
       CASE WHEN f IS NULL THEN [] ELSE COLLECT {
         MATCH (f)-[r:SUPERSEDES|CONTRADICTS|REFERENCES|MERGED_INTO]->(o:Fact)
         WHERE o.id IN $ids AND o.ns = $ns
         RETURN {type: type(r), source: f.id, target: o.id, open: r.resolved_at IS NULL}
       } END AS edges
