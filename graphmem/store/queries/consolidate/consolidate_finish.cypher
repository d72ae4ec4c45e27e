// name: consolidate_finish
// mode: write
// params: ns, run, status, error, timings, new_facts, clusters, watermark, recent, failures
// returns: watermark, finished_at
// Ends run $run: its status, error and timings; the watermark moved forward to $watermark
// (never back); of $recent (facts handled) and $failures (new facts of clusters whose proposal
// was unusable) those still after the watermark; and the namespace's lock released if the
// run still holds it.
MATCH (r:ConsolidationRun {id: $run})
WHERE r.ns = $ns
MATCH (s:ConsolidationState {ns: $ns})
SET r.status = $status, r.error = $error, r.timings = $timings, r.new_facts = $new_facts,
    r.clusters = $clusters, r.finished_at = datetime.statement(),
    s.watermark = CASE
      WHEN $watermark IS NOT NULL AND (s.watermark IS NULL OR $watermark > s.watermark)
        THEN $watermark
      ELSE s.watermark END
WITH r, s, s.lock_run = $run AS held
SET s.lock_run = CASE WHEN held THEN null ELSE s.lock_run END,
    s.lock_expires_at = CASE WHEN held THEN null ELSE s.lock_expires_at END,
    s.last_finished_at = datetime.statement()
SET r.watermark_after = s.watermark,
    s.recent = [id IN $recent WHERE EXISTS {
      MATCH (f:Fact {id: id})
      WHERE f.ns = $ns AND (s.watermark IS NULL OR f.recorded_at > s.watermark) }],
    s.failures = [id IN $failures WHERE EXISTS {
      MATCH (f:Fact {id: id})
      WHERE f.ns = $ns AND (s.watermark IS NULL OR f.recorded_at > s.watermark) }]
RETURN s.watermark AS watermark, r.finished_at AS finished_at
