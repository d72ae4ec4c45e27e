// name: consolidate_pending
// mode: read
// params: ns, after, skip, min_new
// returns: new_facts
// How many believed facts were recorded after $after (all when null) and are not in $skip
// (handled already, or given up), counted up to $min_new.
RETURN size(COLLECT {
  MATCH (f:Fact)
  WHERE f.ns = $ns AND f.recorded_at > coalesce($after, datetime('0001-01-01T00:00:00Z'))
    AND f.retired_at IS NULL AND NOT f.id IN $skip
  RETURN f LIMIT $min_new
}) AS new_facts
