// name: consolidate_record
// mode: write
// params: ns, run, clusters, plan, applied, rejected, review, facts, scrubbed, calls, prompt_tokens, completion_tokens, handled, failed, watermark
// returns: watermark
// Records the outcome of clusters $clusters of run $run on a :ConsolidationRecord of their own
// (RECORDED from the run): their raw plans, applied and rejected operations and review
// candidates as JSON, and the ids of every fact they showed (facts: forget scrubs the record
// of a run that showed an erased fact); adds their LLM usage and counts ($handled handled, $failed not) to the
// run; and moves the namespace's watermark forward to $watermark (never back). Each record is
// written once, so a long run does not rewrite what it recorded before. The facts are locked
// first: if one of them was forgotten while the run thought, the record is written without
// the texts it held ($scrubbed: plan, applied, rejected and review scrubbed), as forget
// would have left it; a forget that comes later waits for this record and scrubs it.
CALL () {
  MATCH (f:Fact)
  WHERE f.ns = $ns AND f.id IN $facts
  SET f.graphmem_lock = true
  REMOVE f.graphmem_lock
  RETURN count(f) AS locked
}
WITH EXISTS { MATCH (t:Tombstone {ns: $ns}) WHERE t.fact_id IN $facts } AS erased
MATCH (r:ConsolidationRun {id: $run})
WHERE r.ns = $ns
MATCH (s:ConsolidationState {ns: $ns})
CREATE (r)-[:RECORDED]->(:ConsolidationRecord {
  ns: $ns, run: $run, at: datetime.statement(), clusters: $clusters,
  plans: CASE WHEN erased THEN $scrubbed.plans ELSE $plan END,
  applied: CASE WHEN erased THEN $scrubbed.applied ELSE $applied END,
  rejected: CASE WHEN erased THEN $scrubbed.rejected ELSE $rejected END,
  review: CASE WHEN erased THEN $scrubbed.review ELSE $review END,
  facts: $facts,
  erased_at: CASE WHEN erased THEN datetime.statement() END,
  erased_by: CASE WHEN erased THEN $run END
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
