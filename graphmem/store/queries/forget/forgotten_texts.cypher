// name: forgotten_texts
// mode: read
// params: ns, hashes
// returns: text_hash, erased_ids, at
// Which of $hashes (keyed hashes of normalised texts) a tombstone of the namespace holds: the
// erased facts' or episodes' ids and when the first was erased.
UNWIND $hashes AS h
MATCH (t:Tombstone {ns: $ns, text_hash: h})
RETURN h AS text_hash, collect(coalesce(t.fact_id, t.episode_id)) AS erased_ids, min(t.at) AS at
