// Whether the :Fact `node` may be returned by recall: in the namespace; believed now (or, with
// $include_retired, ever), or believed at transaction time $as_of (invariant 2); true at valid
// time $valid_at (invariant 3); carrying one of $tags; recorded in [$since, $until).
// For a $valid_at question a superseded fact still counts within its (closed) valid interval:
// it is what is believed about that past, while retracted and merged facts do not count.
// With $as_of too, a fact superseded after $as_of is judged by the valid_to it carried while
// believed (stated_valid_to), not by the end its supersession gave it later, and a fact whose
// open start a later supersession filled in (valid_from_set_at) by the open start it had.
(node.ns = $ns
AND CASE
  WHEN $as_of IS NULL
    THEN $include_retired OR node.retired_at IS NULL
         OR ($valid_at IS NOT NULL AND node.status = 'superseded')
  ELSE {{believed_at(node, $as_of)}}
       OR (node.recorded_at <= $as_of
           AND ($include_retired OR ($valid_at IS NOT NULL AND node.status = 'superseded')))
END
AND ($valid_at IS NULL
     OR CASE
       WHEN $as_of IS NOT NULL AND node.status = 'superseded' AND node.retired_at > $as_of
         THEN {{true_at(CASE WHEN $as_of IS NOT NULL AND node.valid_from_set_at > $as_of THEN null ELSE node.valid_from END, node.stated_valid_to, $valid_at)}}
       ELSE {{true_at(CASE WHEN $as_of IS NOT NULL AND node.valid_from_set_at > $as_of THEN null ELSE node.valid_from END, node.valid_to, $valid_at)}}
     END)
AND ($tags IS NULL OR any(tag IN node.tags WHERE tag IN $tags))
AND ($since IS NULL OR node.recorded_at >= $since)
AND ($until IS NULL OR node.recorded_at < $until))
