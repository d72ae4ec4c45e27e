// name: reembed_namespaces
// mode: read
// params:
// returns: ns, facts, episodes
// Every namespace that holds facts or episodes, in order, with how many of each: re-embedding
// covers the whole database (its vector indexes serve every namespace), one namespace at a
// time.
CALL () {
  MATCH (f:Fact) RETURN f.ns AS ns, count(*) AS facts, 0 AS episodes
  UNION ALL
  MATCH (e:Episode) RETURN e.ns AS ns, 0 AS facts, count(*) AS episodes
}
RETURN ns, sum(facts) AS facts, sum(episodes) AS episodes
ORDER BY ns
