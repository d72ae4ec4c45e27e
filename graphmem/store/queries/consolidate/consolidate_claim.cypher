// name: consolidate_claim
// mode: write
// params: ns, run, ttl_ms, proposer, model, actor
// returns: started_at
// Takes the namespace's consolidation lock for run $run until now + $ttl_ms and records the
// run as running, with who started it (the caller checked the lock in the same transaction,
// consolidate_gate).
MATCH (s:ConsolidationState {ns: $ns})
SET s.lock_run = $run,
    s.lock_expires_at = datetime.statement() + duration({milliseconds: $ttl_ms}),
    s.last_started_at = datetime.statement()
CREATE (r:ConsolidationRun {
  id: $run, ns: $ns, started_at: datetime.statement(), status: 'running',
  proposer: $proposer, model: $model, started_by: $actor, watermark_before: s.watermark,
  llm_calls: 0, prompt_tokens: 0, completion_tokens: 0, clusters_done: 0, clusters_failed: 0
})
RETURN r.started_at AS started_at
