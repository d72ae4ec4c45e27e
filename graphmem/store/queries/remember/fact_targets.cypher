// name: fact_targets
// mode: read
// params: ns, ids
// returns: id, status, retired_at, valid_from, forgotten
// What each id names in the namespace: a fact (its status), a tombstone, or nothing.
UNWIND $ids AS id
OPTIONAL MATCH (f:Fact {id: id})
WHERE f.ns = $ns
OPTIONAL MATCH (t:Tombstone {ns: $ns, fact_id: id})
RETURN id, f.status AS status, f.retired_at AS retired_at, f.valid_from AS valid_from,
       t IS NOT NULL AS forgotten
