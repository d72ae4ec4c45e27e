// name: forget_records
// mode: read
// params: ns, facts
// returns: key, run, plans, applied, rejected, review
// The consolidation records of the namespace that showed one of $facts to a proposer (older
// records, without their list of facts: that name one in an operation or review candidate),
// with the JSON that may hold its words.
MATCH (r:ConsolidationRecord {ns: $ns})
WHERE any(id IN coalesce(r.facts, []) WHERE id IN $facts)
   OR (r.facts IS NULL AND any(s IN r.applied + r.rejected + r.review
                               WHERE any(id IN $facts WHERE s CONTAINS id)))
RETURN elementId(r) AS key, r.run AS run, r.plans AS plans, r.applied AS applied,
       r.rejected AS rejected, r.review AS review
