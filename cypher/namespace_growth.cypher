// name: namespace_growth
// mode: read
// params: ns: string, bucket: string
// returns: bucket, facts_recorded, facts_retired, episodes_recorded, erasures, believed
// example: {"ns": "demo", "bucket": "day"}
// How the namespace grew, one row per $bucket ('day', 'week' starting on Monday, or 'month',
// in UTC) in which something happened, oldest first: the facts recorded, the facts retired
// (superseded, merged or retracted), the messages (episodes) stored, the erasures (facts and
// messages erased by forget), and believed, the number of facts believed at the end of the
// bucket (recorded so far, minus retired, minus erased while still believed). Facts and
// messages erased since count where they were recorded and retired, from their tombstones.
// bucket is the first day of each bucket (a date). Another $bucket is refused.
WITH CASE WHEN $bucket IN ['day', 'week', 'month'] THEN $bucket
          ELSE datetime('bucket must be day, week or month, not ' + coalesce($bucket, 'null'))
     END AS unit
CALL () {
  MATCH (f:Fact {ns: $ns})
  UNWIND [[f.recorded_at, 'fact_recorded'], [f.retired_at, 'fact_retired']] AS event
  RETURN event
  UNION ALL
  MATCH (e:Episode {ns: $ns})
  RETURN [e.recorded_at, 'episode_recorded'] AS event
  UNION ALL
  MATCH (t:Tombstone {ns: $ns})
  UNWIND CASE t.kind
           WHEN 'fact' THEN [[t.recorded_at, 'fact_recorded'], [t.retired_at, 'fact_retired'],
                             [t.at, CASE WHEN t.retired_at IS NULL THEN 'believed_erased'
                                         ELSE 'erased' END]]
           ELSE [[t.recorded_at, 'episode_recorded'], [t.at, 'erased']]
         END AS event
  RETURN event
}
WITH unit, event[0] AS at, event[1] AS what
WHERE at IS NOT NULL
WITH date.truncate(unit, at) AS bucket,
     sum(CASE what WHEN 'fact_recorded' THEN 1 ELSE 0 END) AS facts_recorded,
     sum(CASE what WHEN 'fact_retired' THEN 1 ELSE 0 END) AS facts_retired,
     sum(CASE what WHEN 'episode_recorded' THEN 1 ELSE 0 END) AS episodes_recorded,
     sum(CASE WHEN what IN ['erased', 'believed_erased'] THEN 1 ELSE 0 END) AS erasures,
     sum(CASE what WHEN 'fact_recorded' THEN 1 WHEN 'fact_retired' THEN -1
                   WHEN 'believed_erased' THEN -1 ELSE 0 END) AS change
ORDER BY bucket
WITH collect({bucket: bucket, facts_recorded: facts_recorded, facts_retired: facts_retired,
              episodes_recorded: episodes_recorded, erasures: erasures, change: change})
     AS rows
UNWIND range(0, size(rows) - 1) AS i
WITH rows[i] AS row, reduce(total = 0, r IN rows[..i + 1] | total + r.change) AS believed
RETURN row.bucket AS bucket, row.facts_recorded AS facts_recorded,
       row.facts_retired AS facts_retired, row.episodes_recorded AS episodes_recorded,
       row.erasures AS erasures, believed
ORDER BY bucket
