// name: ns_list
// mode: read
// params:
// returns: ns, counts, last_write
// Every namespace in the database with its counts and its last write: the one query of
// graphmem's that reads across namespaces on purpose (an administrator's listing; no memory
// operation uses it). Each count is a scan of a range index whose first property is ns, with
// the values read from the index itself (no node is read): facts by status, the newest
// recording and retirement of a fact, episodes and their newest recording, tombstones of
// facts and of episodes and the newest erasure, consolidation runs and their newest start;
// the consolidation states, one per namespace, give the newest finished run. counts holds
// [metric, count] pairs ('facts:<status>', 'episodes', 'forgotten_facts',
// 'forgotten_episodes', 'runs'); last_write is the newest of those times.
CALL () {
  MATCH (f:Fact)
  WHERE f.ns IS NOT NULL AND f.status IS NOT NULL
  RETURN f.ns AS ns, 'facts:' + f.status AS metric, count(*) AS n, null AS last
  UNION ALL
  MATCH (f:Fact)
  WHERE f.ns IS NOT NULL AND f.recorded_at IS NOT NULL
  RETURN f.ns AS ns, 'fact_recorded' AS metric, 0 AS n, max(f.recorded_at) AS last
  UNION ALL
  MATCH (f:Fact)
  WHERE f.ns IS NOT NULL AND f.retired_at IS NOT NULL
  RETURN f.ns AS ns, 'fact_retired' AS metric, 0 AS n, max(f.retired_at) AS last
  UNION ALL
  MATCH (e:Episode)
  WHERE e.ns IS NOT NULL AND e.recorded_at IS NOT NULL
  RETURN e.ns AS ns, 'episodes' AS metric, count(*) AS n, max(e.recorded_at) AS last
  UNION ALL
  MATCH (t:Tombstone)
  WHERE t.ns IS NOT NULL AND t.fact_id IS NOT NULL
  RETURN t.ns AS ns, 'forgotten_facts' AS metric, count(*) AS n, null AS last
  UNION ALL
  MATCH (t:Tombstone)
  WHERE t.ns IS NOT NULL AND t.episode_id IS NOT NULL
  RETURN t.ns AS ns, 'forgotten_episodes' AS metric, count(*) AS n, null AS last
  UNION ALL
  MATCH (t:Tombstone)
  WHERE t.ns IS NOT NULL AND t.at IS NOT NULL
  RETURN t.ns AS ns, 'erased' AS metric, 0 AS n, max(t.at) AS last
  UNION ALL
  MATCH (r:ConsolidationRun)
  WHERE r.ns IS NOT NULL AND r.started_at IS NOT NULL
  RETURN r.ns AS ns, 'runs' AS metric, count(*) AS n, max(r.started_at) AS last
  UNION ALL
  MATCH (s:ConsolidationState)
  WHERE s.ns IS NOT NULL
  RETURN s.ns AS ns, 'state' AS metric, 1 AS n, s.last_finished_at AS last
}
WITH ns, collect([metric, n]) AS counts, max(last) AS last_write
RETURN ns, counts, last_write
ORDER BY ns
