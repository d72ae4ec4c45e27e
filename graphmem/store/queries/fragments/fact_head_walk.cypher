// The nearest (the earliest recorded) fact recall may show ({{fact_visible}}) as `node` on the
// incoming SUPERSEDES chain of the :Fact `old`, `old` itself included: the fact that replaced
// it, or `old` when it is visible. No row when there is none.
MATCH (old)<-[:SUPERSEDES*0..]-(node:Fact)
WHERE {{fact_visible}}
RETURN node ORDER BY node.recorded_at, node.id LIMIT 1
