// args: t
// The Cypher value of `t`, a typed property of a namespace export ({key, type, value}):
// value is the text Neo4j wrote (a list of texts for a list type), read back exactly.
CASE t.type
  WHEN 'datetime' THEN datetime(t.value)
  WHEN 'localdatetime' THEN localdatetime(t.value)
  WHEN 'date' THEN date(t.value)
  WHEN 'time' THEN time(t.value)
  WHEN 'localtime' THEN localtime(t.value)
  WHEN 'duration' THEN duration(t.value)
  WHEN 'list<datetime>' THEN [v IN t.value | datetime(v)]
  WHEN 'list<localdatetime>' THEN [v IN t.value | localdatetime(v)]
  WHEN 'list<date>' THEN [v IN t.value | date(v)]
  WHEN 'list<time>' THEN [v IN t.value | time(v)]
  WHEN 'list<localtime>' THEN [v IN t.value | localtime(v)]
  WHEN 'list<duration>' THEN [v IN t.value | duration(v)]
END
