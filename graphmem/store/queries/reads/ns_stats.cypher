// name: ns_stats
// mode: read
// params: ns
// returns: statuses, pinned, hot, cold, summaries, first_recorded_at, last_recorded_at, episodes, sessions, supersedes, contradictions_open, references, derived_from, forgotten_facts, forgotten_episodes, review_open
// Counts for one namespace: facts by status, believed pinned facts (what context puts first),
// believed facts of the hot and cold tiers (pinned ones count as hot), believed summaries,
// episodes, sessions, relationships, tombstones and open review flags.
CALL () {
  MATCH (f:Fact {ns: $ns})
  WITH f.status AS status, count(*) AS n,
       sum(CASE WHEN f.pinned AND f.retired_at IS NULL THEN 1 ELSE 0 END) AS pinned,
       sum(CASE WHEN f.retired_at IS NULL AND (f.pinned OR f.tier = 'hot') THEN 1 ELSE 0 END)
         AS hot,
       sum(CASE WHEN f.retired_at IS NULL AND NOT coalesce(f.pinned, false)
                AND f.tier = 'cold' THEN 1 ELSE 0 END) AS cold,
       sum(CASE WHEN f.retired_at IS NULL AND f.source = 'consolidation:summary' THEN 1
           ELSE 0 END) AS summaries,
       min(f.recorded_at) AS first, max(f.recorded_at) AS last
  RETURN collect({status: status, n: n}) AS statuses, sum(pinned) AS pinned, sum(hot) AS hot,
         sum(cold) AS cold, sum(summaries) AS summaries,
         min(first) AS first_recorded_at, max(last) AS last_recorded_at
}
CALL () {
  MATCH (e:Episode {ns: $ns})
  RETURN count(e) AS episodes, count(DISTINCT e.session_id) AS sessions
}
CALL () {
  MATCH (:Fact {ns: $ns})-[r:SUPERSEDES]->(:Fact {ns: $ns})
  RETURN count(r) AS supersedes
}
CALL () {
  MATCH (a:Fact {ns: $ns})-[r:CONTRADICTS]->(b:Fact {ns: $ns})
  WHERE r.resolved_at IS NULL AND a.retired_at IS NULL AND b.retired_at IS NULL
  RETURN count(r) AS contradictions_open
}
CALL () {
  MATCH (:Fact {ns: $ns})-[r:REFERENCES]->(:Fact {ns: $ns})
  RETURN count(r) AS references
}
CALL () {
  MATCH (:Fact {ns: $ns})-[r:DERIVED_FROM]->(:Episode {ns: $ns})
  RETURN count(r) AS derived_from
}
CALL () {
  MATCH (t:Tombstone {ns: $ns})
  RETURN count(t.fact_id) AS forgotten_facts, count(t.episode_id) AS forgotten_episodes
}
CALL () {
  CALL () {
    MATCH (:Fact {ns: $ns})-[x:FLAGGED_BY]->()
    WHERE x.closed_at IS NULL
    RETURN x
    UNION ALL
    MATCH (:Episode {ns: $ns})-[x:FLAGGED_BY]->()
    WHERE x.closed_at IS NULL
    RETURN x
  }
  RETURN count(x) AS review_open
}
RETURN statuses, pinned, hot, cold, summaries, first_recorded_at, last_recorded_at, episodes, sessions, supersedes,
       contradictions_open, references, derived_from, forgotten_facts, forgotten_episodes,
       review_open
