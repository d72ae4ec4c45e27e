// name: consolidate_record
// mode: write
// params: ns, run, plan, applied, rejected, review, calls, prompt_tokens, completion_tokens, handled, watermark
// returns: watermark
// Adds one cluster's outcome to run $run (its raw plan, applied and rejected operations as
// JSON, review candidates, LLM usage) and, when the cluster was handled, moves the
// namespace's watermark forward to $watermark (never back).
MATCH (r:ConsolidationRun {id: $run})
WHERE r.ns = $ns
MATCH (s:ConsolidationState {ns: $ns})
SET r.plans = r.plans + $plan,
    r.applied = r.applied + $applied,
    r.rejected = r.rejected + $rejected,
    r.review = r.review + $review,
    r.llm_calls = r.llm_calls + $calls,
    r.prompt_tokens = r.prompt_tokens + $prompt_tokens,
    r.completion_tokens = r.completion_tokens + $completion_tokens,
    r.clusters_done = r.clusters_done + CASE WHEN $handled THEN 1 ELSE 0 END,
    r.clusters_failed = r.clusters_failed + CASE WHEN $handled THEN 0 ELSE 1 END,
    s.watermark = CASE
      WHEN $watermark IS NOT NULL AND (s.watermark IS NULL OR $watermark > s.watermark)
        THEN $watermark
      ELSE s.watermark END
RETURN s.watermark AS watermark
