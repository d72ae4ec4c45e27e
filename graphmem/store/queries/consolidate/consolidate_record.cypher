// name: consolidate_record
// mode: write
// params: ns, run, records, calls, prompt_tokens, completion_tokens, handled, failed, watermark
// returns: watermark
// Records the outcome of clusters of run $run, each of $records ({clusters, plans, applied,
// rejected, review, facts, scrubbed}) on a :ConsolidationRecord of its own (RECORDED from the
// run): their raw plans, applied and rejected operations and review candidates as JSON, and
// the ids of every fact they showed (facts: forget scrubs the record of a run that showed an
// erased fact); adds their LLM usage and counts ($handled handled, $failed not) to the run;
// and moves the namespace's watermark forward to $watermark (never back). Each record is
// written once, so a long run does not rewrite what it recorded before. The facts are locked
// first: if one of a record's facts was forgotten while the run thought, that record is
// written without the texts it held (scrubbed: plans, applied, rejected and review
// scrubbed), as forget would have left it; a forget that comes later waits for this record
// and scrubs it.
CALL () {
  MATCH (f:Fact)
  WHERE f.ns = $ns AND f.id IN reduce(ids = [], rec IN $records | ids + rec.facts)
  SET f.graphmem_lock = true
  REMOVE f.graphmem_lock
  RETURN count(f) AS locked
}
MATCH (r:ConsolidationRun {id: $run})
WHERE r.ns = $ns
MATCH (s:ConsolidationState {ns: $ns})
CALL (r) {
  UNWIND $records AS rec
  WITH rec, EXISTS { MATCH (t:Tombstone {ns: $ns}) WHERE t.fact_id IN rec.facts } AS erased
  CREATE (r)-[:RECORDED]->(:ConsolidationRecord {
    ns: $ns, run: $run, at: datetime.statement(), clusters: rec.clusters,
    plans: CASE WHEN erased THEN rec.scrubbed.plans ELSE rec.plans END,
    applied: CASE WHEN erased THEN rec.scrubbed.applied ELSE rec.applied END,
    rejected: CASE WHEN erased THEN rec.scrubbed.rejected ELSE rec.rejected END,
    review: CASE WHEN erased THEN rec.scrubbed.review ELSE rec.review END,
    facts: rec.facts,
    erased_at: CASE WHEN erased THEN datetime.statement() END,
    erased_by: CASE WHEN erased THEN $run END
  })
  RETURN count(*) AS recorded
}
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
