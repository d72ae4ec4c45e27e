// args: item
// The properties of `item` (a node or a relationship) whose value JSON cannot hold as it is
// (times, dates, durations, points, and lists of them), each with its Cypher type and its
// text as Neo4j writes it (toString keeps the offset or the zone name, and nanoseconds), so
// that an export restores each one exactly.
[k IN keys(item) WHERE valueType(item[k]) =~ '.*(DATE|TIME|DURATION|POINT).*' |
  {key: k, type: valueType(item[k]),
   text: CASE WHEN valueType(item[k]) STARTS WITH 'LIST'
              THEN [x IN item[k] | toString(x)] ELSE toString(item[k]) END}]
