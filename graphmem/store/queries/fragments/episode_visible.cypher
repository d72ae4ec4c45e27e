// Whether the :Episode `node` may be returned by recall: in the namespace; stored by
// transaction time $as_of; sent by valid time $valid_at; sent in [$since, $until); said by
// one of $speakers (case aside; a message stored without a speaker is said by its role).
(node.ns = $ns
AND ($as_of IS NULL OR node.recorded_at <= $as_of)
AND ($valid_at IS NULL OR coalesce(node.occurred_at, node.recorded_at) <= $valid_at)
AND ($since IS NULL OR coalesce(node.occurred_at, node.recorded_at) >= $since)
AND ($until IS NULL OR coalesce(node.occurred_at, node.recorded_at) < $until)
AND ($speakers IS NULL
     OR toLower(coalesce(node.speaker, node.role)) IN [name IN $speakers | toLower(name)]))
