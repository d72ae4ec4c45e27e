// name: summary_link
// mode: write
// params: ns, run, summary, members, reason
// returns: linked
// Links the summary fact $summary, written by run $run, to each of its $members with a
// SUMMARIZES edge (at, actor: the run, reason); the summary keeps the run as summary_by.
MATCH (s:Fact {id: $summary})
WHERE s.ns = $ns
SET s.summary_by = $run
WITH s
UNWIND $members AS id
MATCH (m:Fact {id: id})
WHERE m.ns = $ns
CREATE (s)-[:SUMMARIZES {at: datetime.statement(), actor: $run, reason: $reason}]->(m)
RETURN count(*) AS linked
