// name: consolidation_runs
// mode: read
// params: ns: string, since: datetime, until: datetime, limit: integer
// returns: run_id, status, proposer, model, started_at, finished_at, new_facts, clusters, llm_calls, prompt_tokens, completion_tokens, applied, rejected, review, error, undone_at, undone_by
// example: {"ns": "demo", "since": "2026-01-01T00:00:00Z", "until": "2026-03-01T00:00:00Z", "limit": 20}
// The consolidation runs started after $since and up to $until, oldest first: their status
// (running, finished, partial, failed, undone), proposer ('llm' or 'heuristic') and model,
// start and end, the new facts and clusters they looked at, their LLM usage, and what their
// :ConsolidationRecord nodes hold, in the order the clusters were recorded. applied,
// rejected and review are lists of JSON texts, one per operation:
//   applied:  {"op", "facts" (ids), "numbers" (as the plan gave them), "reason", "cluster"}
//   rejected: {"op", "numbers", "facts", "reason" (the plan's), "rejection" (why it was
//             refused), "cluster"}
//   review:   the proposal's candidates for review, as the proposer gave them.
// A record that showed a fact erased since holds no texts (forget scrubs it). An undone run
// has undone_at and undone_by; the edges it made are gone, its records stay. error is the
// type of the error that stopped a run (its message, which may quote what the proposer was
// shown, stays out of the library).
// $since and $until are datetimes with a zone, or ISO-8601 text with an offset or a zone id;
// text without one, no time at all, and an $until before $since are refused.
WITH [$since, $until] AS given
{{zoned_times}}
WITH times[0] AS t0, times[1] AS t1
WITH t0, CASE WHEN t1 < t0
                THEN datetime('until (' + toString(t1) + ') is before since (' + toString(t0) + ')')
              ELSE t1 END AS t1
MATCH (r:ConsolidationRun {ns: $ns})
WHERE r.started_at > t0 AND r.started_at <= t1
WITH r ORDER BY r.started_at, r.id LIMIT $limit
CALL (r) {
  OPTIONAL MATCH (r)-[:RECORDED]->(c:ConsolidationRecord {ns: $ns})
  WITH c ORDER BY c.at, c.clusters[0]
  RETURN reduce(acc = [], x IN collect(c.applied) | acc + x) AS applied,
         reduce(acc = [], x IN collect(c.rejected) | acc + x) AS rejected,
         reduce(acc = [], x IN collect(c.review) | acc + x) AS review
}
RETURN r.id AS run_id, r.status AS status, r.proposer AS proposer, r.model AS model,
       r.started_at AS started_at, r.finished_at AS finished_at, r.new_facts AS new_facts,
       r.clusters AS clusters, r.llm_calls AS llm_calls, r.prompt_tokens AS prompt_tokens,
       r.completion_tokens AS completion_tokens, applied, rejected, review,
       split(r.error, ':')[0] AS error,
       r.undone_at AS undone_at, r.undone_by AS undone_by
ORDER BY started_at, run_id
