// name: flag_same_text
// mode: write
// params: ns, actor, reason, copies, at
// returns: flags
// Flags for review each believed fact $copies[].copy that holds the very same text as the fact
// $copies[].cause this erasure forgets (before it is erased): the words asked to be forgotten
// are still there. One open flag per copy and cause, made at the erasure's time $at; it keeps
// the erasure's reason.
UNWIND $copies AS row
MATCH (f:Fact {ns: $ns, id: row.copy})
MATCH (c:Fact {ns: $ns, id: row.cause})
WITH f, c
WHERE f.retired_at IS NULL
  AND NOT EXISTS { (f)-[o:FLAGGED_BY]->(c) WHERE o.closed_at IS NULL AND o.event = 'forgotten' }
CREATE (f)-[:FLAGGED_BY {ns: $ns, event: 'forgotten', relation: 'same_text',
                         at: $at, actor: $actor, reason: $reason}]->(c)
RETURN collect({flagged: f.id, cause: c.id, relation: 'same_text'}) AS flags
