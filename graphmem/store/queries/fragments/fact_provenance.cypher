// The episodes the :Fact `node` was derived from, in the namespace, as recall's provenance.
[(node)-[:DERIVED_FROM]->(e:Episode) WHERE e.ns = $ns | e {.id, .external_id, .session_id, .occurred_at}]
