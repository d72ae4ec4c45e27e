// args: a, c, b
// The CONTRADICTS edge `c` from `a` to `b` (each a :Fact or, once forgotten, a :Tombstone,
// whose text is null), as ContradictionRecord reads it.
{a: coalesce(a.id, a.fact_id), a_text: a.text, b: coalesce(b.id, b.fact_id), b_text: b.text,
 at: c.at, actor: c.actor, reason: c.reason, resolved_at: c.resolved_at,
 resolved_by: c.resolved_by, resolution: c.resolution, kept: c.kept}
