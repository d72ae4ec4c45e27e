// The public properties of the :Fact `node` (everything but the embedding; a pinned fact's
// tier is hot, one with none is warm; a summary's members by id), with its open
// contradictions (the believed facts of its namespace a CONTRADICTS edge without resolved_at
// joins it to, either way) and its open review flags.
node {.id, .ns, .text, .status, .recorded_at, .recorded_by, .retired_at, .valid_from, .valid_to,
      .stated_valid_to, .valid_from_set_at, .superseded_by, .source, .tags, .access_count, .last_accessed_at,
      .text_hash, .metadata, .pinned, .retraction_reason, .previously_forgotten, .importance,
      tier: CASE WHEN node.pinned = true THEN 'hot' ELSE coalesce(node.tier, 'warm') END,
      review: {{review_marks}},
      summarizes: COLLECT {
        MATCH (node)-[:SUMMARIZES]->(member:Fact)
        RETURN member.id ORDER BY member.recorded_at, member.id
      },
      contradictions: COLLECT {
        MATCH (node)-[c:CONTRADICTS]-(other:Fact)
        WHERE c.resolved_at IS NULL AND other.ns = node.ns AND other.retired_at IS NULL
        RETURN {id: other.id, text: other.text, reason: c.reason, at: c.at, actor: c.actor}
        ORDER BY c.at, other.id
      }}
