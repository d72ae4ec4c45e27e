// name: ns_contents
// mode: read
// params: ns
// returns: counts, last_write, now
// What namespace $ns holds, as ns_list counts it for every namespace ([metric, count] pairs
// and the newest write), with the consolidation nodes counted too ('records', 'changes',
// 'state'), and the time of the read: whether an import may go into it, what a drop removes,
// and whether an export's namespace changed while it was read.
CALL () {
  MATCH (f:Fact)
  WHERE f.ns = $ns AND f.status IS NOT NULL
  RETURN 'facts:' + f.status AS metric, count(*) AS n, null AS last
  UNION ALL
  MATCH (f:Fact)
  WHERE f.ns = $ns AND f.recorded_at IS NOT NULL
  RETURN 'fact_recorded' AS metric, 0 AS n, max(f.recorded_at) AS last
  UNION ALL
  MATCH (f:Fact)
  WHERE f.ns = $ns AND f.retired_at IS NOT NULL
  RETURN 'fact_retired' AS metric, 0 AS n, max(f.retired_at) AS last
  UNION ALL
  MATCH (e:Episode)
  WHERE e.ns = $ns AND e.recorded_at IS NOT NULL
  RETURN 'episodes' AS metric, count(*) AS n, max(e.recorded_at) AS last
  UNION ALL
  MATCH (t:Tombstone)
  WHERE t.ns = $ns AND t.fact_id IS NOT NULL
  RETURN 'forgotten_facts' AS metric, count(*) AS n, null AS last
  UNION ALL
  MATCH (t:Tombstone)
  WHERE t.ns = $ns AND t.episode_id IS NOT NULL
  RETURN 'forgotten_episodes' AS metric, count(*) AS n, null AS last
  UNION ALL
  MATCH (t:Tombstone)
  WHERE t.ns = $ns AND t.at IS NOT NULL
  RETURN 'erased' AS metric, 0 AS n, max(t.at) AS last
  UNION ALL
  MATCH (r:ConsolidationRun)
  WHERE r.ns = $ns AND r.started_at IS NOT NULL
  RETURN 'runs' AS metric, count(*) AS n, max(r.started_at) AS last
  UNION ALL
  MATCH (s:ConsolidationState {ns: $ns})
  RETURN 'state' AS metric, 1 AS n, s.last_finished_at AS last
  UNION ALL
  MATCH (c:ConsolidationRecord {ns: $ns})
  RETURN 'records' AS metric, count(*) AS n, max(c.at) AS last
  UNION ALL
  MATCH (c:ConsolidationChange)
  WHERE c.ns = $ns AND c.run IS NOT NULL
  RETURN 'changes' AS metric, count(*) AS n, null AS last
}
WITH collect([metric, n]) AS counts, max(last) AS last_write
RETURN counts, last_write, datetime() AS now
