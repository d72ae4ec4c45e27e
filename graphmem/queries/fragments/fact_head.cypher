// The fact recall may show for the :Fact `found`, as `node` ({{fact_visible}}): `found` itself
// when it is visible, else the nearest (the earliest recorded) visible fact up its incoming
// SUPERSEDES chain, the fact that replaced it. No row when there is none.
CALL (found) {
  MATCH (found)<-[:SUPERSEDES*0..]-(node:Fact)
  WHERE {{fact_visible}}
  RETURN node ORDER BY node.recorded_at, node.id LIMIT 1
}
