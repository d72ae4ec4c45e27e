// The public properties of the :Episode `node` (everything but the embedding), with its open
// review flags.
node {.id, .ns, .content, .role, .speaker, .session_id, .external_id, .occurred_at,
      .recorded_at, .recorded_by, .content_hash, .access_count, .last_accessed_at, .metadata,
      .previously_forgotten, review: {{review_marks}}}
