// The times of the list `given`, as the list `times` of datetimes in UTC, for the analyst
// library. Each is a datetime with a zone, or ISO-8601 text with an offset or a zone id (a
// space for the T, as str() writes it, is read too); text without one (which Neo4j would read
// as UTC), and no time at all, are refused with an error that says so. Starts the query: it
// carries nothing but `times`.
WITH [t IN given | CASE WHEN t IS :: STRING THEN trim(toString(t)) ELSE t END] AS given
WITH [t IN given |
       CASE WHEN t IS :: STRING AND t =~ '[0-9]{4}-[0-9]{2}-[0-9]{2} .+'
              THEN left(t, 10) + 'T' + substring(t, 11)
            ELSE t END] AS given
WITH [t IN given |
       CASE
         WHEN t IS NULL THEN datetime('no time given (give one, as in 2026-01-01T00:00:00Z)')
         WHEN t IS :: ZONED DATETIME THEN t
         WHEN t IS :: STRING AND t =~ '.+T.+([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)(\\[.+\\])?|.+T.+\\[.+\\]'
           THEN datetime(t)
         ELSE datetime('not a time with a zone: ' + toString(t) + ' (give one, as in 2026-01-01T00:00:00Z)')
       END] AS given
// Compared by instant, as stored. Built from the instant itself: converting with
// datetime({datetime: t, timezone: 'Z'}) reads t's local time again, which in a zone's
// repeated hour (clocks going back) takes the earlier of the two and loses an hour.
WITH [t IN given | datetime({epochSeconds: t.epochSeconds, nanosecond: t.nanosecond})] AS times
