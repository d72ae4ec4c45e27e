// name: consolidate_runs
// mode: read
// params: ns, ids, limit
// returns: run
// The namespace's consolidation runs, newest first (those in $ids, or the last $limit).
MATCH (r:ConsolidationRun)
WHERE r.ns = $ns AND ($ids IS NULL OR r.id IN $ids)
WITH r ORDER BY r.started_at DESC, r.id LIMIT $limit
RETURN r {.id, .ns, .status, .started_at, .finished_at, .proposer, .model, .plans, .applied,
          .rejected, .review, .llm_calls, .prompt_tokens, .completion_tokens, .timings, .error,
          .undone_at, .undone_by} AS run
