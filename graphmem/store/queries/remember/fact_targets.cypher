// name: fact_targets
// mode: read
// params: ns, ids
// returns: id, status, retired_at, valid_from, forgotten
// What each id names in the namespace: a fact (its status), a tombstone (of a fact or an
// episode), or nothing.
UNWIND $ids AS id
OPTIONAL MATCH (f:Fact {id: id})
WHERE f.ns = $ns
RETURN id, f.status AS status, f.retired_at AS retired_at, f.valid_from AS valid_from,
       EXISTS { MATCH (:Tombstone {ns: $ns, fact_id: id}) }
         OR EXISTS { MATCH (:Tombstone {ns: $ns, episode_id: id}) } AS forgotten
