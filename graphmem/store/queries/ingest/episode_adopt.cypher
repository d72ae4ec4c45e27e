// name: episode_adopt
// mode: write
// params: ns, rows
// returns: id
// Gives each episode of $rows (row.id) that was stored without an external id the external id
// (row.external_id) of a message found to repeat it, unless another episode of its session
// has that id by now. Run under the namespace's ingest lock.
UNWIND $rows AS row
MATCH (e:Episode {ns: $ns, id: row.id})
WHERE e.external_id IS NULL
  AND NOT EXISTS {
    MATCH (x:Episode {ns: $ns, external_id: row.external_id})
    WHERE coalesce(x.session_id, '') = coalesce(e.session_id, '')
  }
SET e.external_id = row.external_id
RETURN e.id AS id
