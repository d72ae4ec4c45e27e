// name: reembed_namespaces
// mode: read
// params:
// returns: now, namespaces
// Every namespace that holds facts or episodes, in order, with how many of each, and the
// time of the read: re-embedding covers the whole database (its vector indexes serve every
// namespace), one namespace at a time.
CALL () {
  MATCH (f:Fact) RETURN f.ns AS ns, count(*) AS facts, 0 AS episodes
  UNION ALL
  MATCH (e:Episode) RETURN e.ns AS ns, 0 AS facts, count(*) AS episodes
}
WITH ns, sum(facts) AS facts, sum(episodes) AS episodes
ORDER BY ns
WITH collect({ns: ns, facts: facts, episodes: episodes}) AS namespaces
RETURN datetime() AS now, namespaces
