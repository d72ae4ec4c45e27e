// args: fact
// The valid time of `fact` as believed at transaction time $as_of (now, without it), in epoch
// ms, an open end null: a fact superseded after $as_of ends where it did while believed
// (stated_valid_to), and one whose open start a supersession after $as_of filled in
// (valid_from_set_at) starts open, as in fact_visible. Both null for a null `fact`.
{from: CASE WHEN $as_of IS NOT NULL AND fact.valid_from_set_at > $as_of THEN null
            ELSE fact.valid_from.epochMillis END,
 to: CASE WHEN $as_of IS NOT NULL AND fact.status = 'superseded' AND fact.retired_at > $as_of
          THEN fact.stated_valid_to.epochMillis
          ELSE fact.valid_to.epochMillis END}
