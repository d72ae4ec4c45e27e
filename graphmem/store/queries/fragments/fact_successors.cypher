// The candidates `found` (from fact_candidate, best first) with each superseded one paired
// with the fact that replaced it (fact_head_walk: the current belief, or the one believed at
// $as_of).
// Only superseded candidates among the first $pool are followed (each walk costs up to the
// chain's length); a superseded candidate without a successor to show is dropped, and so is
// every candidate after the first that leads to the same fact, except, with $keep_superseded
// (the question names a period, in which a superseded fact may have been true), a superseded
// one. At most $pool are kept.
reduce(kept = [], hit IN [cand IN found[..$pool] |
    CASE WHEN cand.superseded
      THEN cand {.*, head: COLLECT {
        WITH cand.node AS old
        {{fact_head_walk}}
      }[0]}
      ELSE cand
    END] + [cand IN found[$pool..] WHERE cand.superseded IS NULL] |
  CASE
    WHEN size(kept) >= $pool OR (hit.superseded AND hit.head IS NULL) THEN kept
    WHEN any(k IN kept WHERE coalesce(k.head, k.node) = coalesce(hit.head, hit.node))
         AND NOT ($keep_superseded AND coalesce(hit.superseded, false))
      THEN kept
    ELSE kept + hit
  END)
