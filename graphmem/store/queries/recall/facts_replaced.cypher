// name: facts_replaced
// mode: read
// params: ns, ids
// returns: id
// The facts among $ids that another fact among $ids replaced, directly or further up a
// SUPERSEDES chain. Run after the reads that found $ids, it sees every supersession that
// committed before them.
UNWIND $ids AS id
MATCH (old:Fact {id: id})<-[:SUPERSEDES*1..]-(new:Fact)
WHERE old.ns = $ns AND new.id IN $ids
RETURN DISTINCT old.id AS id
