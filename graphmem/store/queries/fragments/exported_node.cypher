// args: node
// The columns of one node of a namespace export page: its key, element id and labels; with
// $content its properties as [key, value] pairs (the embedding only with $vectors; times,
// dates and durations only in typed, as typed_properties gives them); with $edges its
// relationships to nodes of namespace $ns (type, the other end's key and labels, the
// relationship's properties and typed ones).
{{export_key(node)}} AS key, elementId(node) AS eid, labels(node) AS labels,
CASE WHEN $content
  THEN [k IN keys(node)
        WHERE ($vectors OR k <> 'embedding')
          AND NOT valueType(node[k]) =~ '.*(DATE|TIME|DURATION|POINT).*' | [k, node[k]]]
  ELSE [] END AS properties,
CASE WHEN $content THEN {{typed_properties(node)}} ELSE [] END AS typed,
CASE WHEN $edges
  THEN [(node)-[r]->(m) WHERE m.ns = $ns |
        {type: type(r), end: {{export_key(m)}}, end_labels: labels(m),
         properties: [k IN keys(r)
                      WHERE NOT valueType(r[k]) =~ '.*(DATE|TIME|DURATION|POINT).*' | [k, r[k]]],
         typed: {{typed_properties(r)}}}]
  ELSE [] END AS edges
