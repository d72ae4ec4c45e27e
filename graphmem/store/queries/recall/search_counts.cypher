// name: search_counts
// mode: read
// params: ns, statuses, cap
// returns: facts, episodes
// How many of the namespace's facts of the $statuses, and of its episodes, the vector indexes
// hold, each counted up to $cap. A filtered vector search (Cypher 25's SEARCH) asks for at
// most that many: Neo4j 2026.09 can fail one that asks for more entries than its filter
// matches, with an internal "Index … out of bounds" error, once the index has been written to
// in many transactions.
RETURN size(COLLECT {
         MATCH (f:Fact)
         WHERE f.ns = $ns AND f.status IN $statuses AND f.embedding IS NOT NULL
         RETURN 1 LIMIT $cap
       }) AS facts,
       size(COLLECT {
         MATCH (e:Episode)
         WHERE e.ns = $ns AND e.embedding IS NOT NULL
         RETURN 1 LIMIT $cap
       }) AS episodes
