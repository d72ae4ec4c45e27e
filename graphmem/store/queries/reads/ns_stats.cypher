// name: ns_stats
// mode: read
// params: ns
// returns: statuses, pinned, first_recorded_at, last_recorded_at, episodes, sessions, supersedes, contradictions_open, references, derived_from, forgotten_facts, forgotten_episodes, review_open
// Counts for one namespace: facts by status, believed pinned facts (what context puts first),
// episodes, sessions, relationships, tombstones and open review flags.
CALL () {
  MATCH (f:Fact {ns: $ns})
  WITH f.status AS status, count(*) AS n,
       sum(CASE WHEN f.pinned AND f.retired_at IS NULL THEN 1 ELSE 0 END) AS pinned,
       min(f.recorded_at) AS first, max(f.recorded_at) AS last
  RETURN collect({status: status, n: n}) AS statuses, sum(pinned) AS pinned,
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
RETURN statuses, pinned, first_recorded_at, last_recorded_at, episodes, sessions, supersedes,
       contradictions_open, references, derived_from, forgotten_facts, forgotten_episodes,
       review_open
