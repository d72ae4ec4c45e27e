// name: verify_scan
// mode: read
// params: ns, ids
// returns: kind, labels, id, properties
// Everything the namespace holds, for the verification scan: every node with this ns (any
// label) and every relationship from or to one, each with its properties but embeddings; and
// any :Fact or :Episode that carries an erased id of $ids.
CALL () {
  MATCH (n)
  WHERE n.ns = $ns
  RETURN 'node' AS kind, labels(n) AS labels,
         coalesce(n.id, n.fact_id, n.episode_id, n.run, elementId(n)) AS id,
         [k IN keys(n) WHERE k <> 'embedding' | [k, n[k]]] AS properties
  UNION ALL
  MATCH (x)
  WHERE x.ns = $ns
  MATCH (x)-[r]-()
  WITH DISTINCT r
  WITH r, startNode(r) AS n, endNode(r) AS m
  RETURN 'relationship' AS kind, [type(r)] AS labels,
         coalesce(n.id, n.fact_id, n.episode_id, '?') + ' -> '
           + coalesce(m.id, m.fact_id, m.episode_id, '?') AS id,
         [k IN keys(r) | [k, r[k]]] AS properties
  UNION ALL
  MATCH (n:Fact|Episode)
  WHERE n.id IN $ids
  RETURN 'erased id' AS kind, labels(n) AS labels, n.id AS id, [] AS properties
}
RETURN kind, labels, id, properties
