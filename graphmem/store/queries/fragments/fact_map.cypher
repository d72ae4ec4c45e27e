// The public properties of the :Fact `node` (everything but the embedding).
node {.id, .ns, .text, .status, .recorded_at, .retired_at, .valid_from, .valid_to,
      .stated_valid_to, .superseded_by, .source, .tags, .access_count, .last_accessed_at,
      .text_hash, .metadata, .pinned}
