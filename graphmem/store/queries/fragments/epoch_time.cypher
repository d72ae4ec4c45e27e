// args: t
// The zoned datetime `t` as [seconds since the epoch, nanosecond of that second], its instant:
// a client reads that much faster than a driver's DateTime (consolidation reads thousands of
// facts). Only from the epoch on (before it, Neo4j's epochSeconds rounds toward zero); any
// other value (an earlier time, null) as it is.
CASE
  WHEN t IS :: ZONED DATETIME NOT NULL AND t >= datetime({epochSeconds: 0})
    THEN [t.epochSeconds, t.nanosecond]
  ELSE t
END
