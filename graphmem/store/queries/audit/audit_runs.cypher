// name: audit_runs
// mode: read
// params: ns, ids
// returns: run
// The consolidation runs of the namespace among $ids (the actors of a timeline's edges).
MATCH (r:ConsolidationRun {ns: $ns})
WHERE r.id IN $ids
RETURN r {.id, .status, .proposer, .model, .started_at, .finished_at} AS run
ORDER BY r.started_at
