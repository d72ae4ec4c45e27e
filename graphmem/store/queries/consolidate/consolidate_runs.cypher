// name: consolidate_runs
// mode: read
// params: ns, ids, limit
// returns: run
// The namespace's consolidation runs, newest first (those in $ids, or the last $limit), with
// what their :ConsolidationRecord nodes hold, in the order the clusters were recorded.
MATCH (r:ConsolidationRun)
WHERE r.ns = $ns AND ($ids IS NULL OR r.id IN $ids)
WITH r ORDER BY r.started_at DESC, r.id LIMIT $limit
CALL (r) {
  OPTIONAL MATCH (r)-[:RECORDED]->(c:ConsolidationRecord)
  WITH c ORDER BY c.at, c.clusters[0]
  RETURN reduce(acc = [], x IN collect(c.plans) | acc + x) AS plans,
         reduce(acc = [], x IN collect(c.applied) | acc + x) AS applied,
         reduce(acc = [], x IN collect(c.rejected) | acc + x) AS rejected,
         reduce(acc = [], x IN collect(c.review) | acc + x) AS review
}
RETURN r {.id, .ns, .status, .started_at, .finished_at, .proposer, .model, .llm_calls,
          .prompt_tokens, .completion_tokens, .timings, .error, .undone_at, .undone_by, .started_by,
          plans: plans, applied: applied, rejected: rejected, review: review} AS run
