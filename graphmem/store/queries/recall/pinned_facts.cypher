// name: pinned_facts
// mode: read
// params: ns, limit, as_of, valid_at, include_retired, tags, since, until
// returns: facts, provenance, beyond, hot, hot_provenance
// Pinned (core) facts visible under the same filters as recall and believed at the time asked
// about ($as_of, else now), newest first (then by id, so the order is stable): the first $limit
// of them, with the episodes each was derived from (`provenance`, in the same order), and the
// ids of the others; then the hot tier's unpinned facts under the same filters (`hot`, with
// `hot_provenance`: consolidation caps their number). One row, also when there is none. A
// superseded fact keeps its pin and its tier, which no longer count: with $valid_at it may
// still be visible, but it is not put first.
OPTIONAL MATCH (node:Fact {ns: $ns})
WHERE node.pinned = true AND {{fact_visible}}
  AND (node.retired_at IS NULL OR ($as_of IS NOT NULL AND node.retired_at > $as_of))
WITH node
ORDER BY node.recorded_at DESC, node.id
WITH collect(node) AS pinned
CALL () {
  OPTIONAL MATCH (node:Fact {ns: $ns, tier: 'hot'})
  WHERE coalesce(node.pinned, false) = false AND {{fact_visible}}
    AND (node.retired_at IS NULL OR ($as_of IS NOT NULL AND node.retired_at > $as_of))
  WITH node
  ORDER BY node.recorded_at DESC, node.id
  RETURN collect(node) AS hot
}
RETURN [node IN pinned[..$limit] | {{fact_map}}] AS facts,
       [node IN pinned[..$limit] | {{fact_provenance}}] AS provenance,
       [node IN pinned[$limit..] | node.id] AS beyond,
       [node IN hot | {{fact_map}}] AS hot,
       [node IN hot | {{fact_provenance}}] AS hot_provenance
