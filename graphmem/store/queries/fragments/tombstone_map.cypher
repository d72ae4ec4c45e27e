// args: node
// The :Tombstone `node` as ErasedFact reads it: its ids, times and why; it holds no words.
{kind: node.kind, id: coalesce(node.fact_id, node.episode_id), recorded_at: node.recorded_at,
 retired_at: node.retired_at, status_at_erasure: node.status_at_erasure, erased_at: node.at,
 actor: node.actor, reason: node.reason, erasure: node.erasure}
