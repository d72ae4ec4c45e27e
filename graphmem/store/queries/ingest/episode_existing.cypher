// name: episode_existing
// mode: read
// params: ns, rows
// returns: i, existing, by_external_id, adopt
// For each candidate message (row.i, row.session_id, row.external_id, row.content_hash), the id
// of an already stored episode it repeats: same session and external id, or same content hash
// unless both carry external ids (different ids then mean different messages). For a match by
// external id, also that episode's message fields, so that the caller can tell a repeat from
// a different message sent under the same id. adopt: the match is by content hash, to an
// episode stored without an external id, which is to take the candidate's.
UNWIND $rows AS row
OPTIONAL MATCH (h:Episode {ns: $ns, content_hash: row.content_hash})
WHERE row.external_id IS NULL OR h.external_id IS NULL
WITH row, head(collect(h.id)) AS by_hash
OPTIONAL MATCH (x:Episode {ns: $ns, external_id: row.external_id})
WHERE coalesce(x.session_id, '') = coalesce(row.session_id, '')
WITH row, by_hash, head(collect(x)) AS same_id
RETURN row.i AS i, coalesce(same_id.id, by_hash) AS existing,
       same_id {.id, .session_id, .role, .speaker, .occurred_at, .content} AS by_external_id,
       same_id IS NULL AND by_hash IS NOT NULL AND row.external_id IS NOT NULL AS adopt
