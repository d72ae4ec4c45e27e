// name: consolidate_record
// mode: write
// params: ns, run, clusters, plan, applied, rejected, review, facts, calls, prompt_tokens, completion_tokens, handled, failed, watermark
// returns: watermark
// Records the outcome of clusters $clusters of run $run on a :ConsolidationRecord of their own
// (RECORDED from the run): their raw plans, applied and rejected operations and review
// candidates as JSON, and the ids of every fact they showed (facts: forget scrubs the record
// of a run that showed an erased fact); adds their LLM usage and counts ($handled handled, $failed not) to the
// run; and moves the namespace's watermark forward to $watermark (never back). Each record is
// written once, so a long run does not rewrite what it recorded before.
MATCH (r:ConsolidationRun {id: $run})
WHERE r.ns = $ns
MATCH (s:ConsolidationState {ns: $ns})
CREATE (r)-[:RECORDED]->(:ConsolidationRecord {
  ns: $ns, run: $run, at: datetime.statement(), clusters: $clusters, plans: $plan,
  applied: $applied, rejected: $rejected, review: $review, facts: $facts
})
SET r.llm_calls = r.llm_calls + $calls,
    r.prompt_tokens = r.prompt_tokens + $prompt_tokens,
    r.completion_tokens = r.completion_tokens + $completion_tokens,
    r.clusters_done = r.clusters_done + $handled,
    r.clusters_failed = r.clusters_failed + $failed,
    s.watermark = CASE
      WHEN $watermark IS NOT NULL AND (s.watermark IS NULL OR $watermark > s.watermark)
        THEN $watermark
      ELSE s.watermark END
RETURN s.watermark AS watermark
