// name: rewrite_supersede
// mode: write
// params: ns, actor, rows
// returns: applied, resolved
// Each row's newer fact replaces its older one (both believed): a SUPERSEDES edge (actor
// $actor, row.reason), the older retired with superseded_by, and its valid time closed where
// the newer one's begins (its valid_from; a newer fact without one becomes valid from its
// recording, as remember(supersedes=) does, unless that would put its start after its end),
// keeping the valid_to it had as stated_valid_to. With row.resolve, the open contradictions between the two are settled:
// resolved_at, resolution (row.reason), resolved_by ($actor) and kept (the newer's id). A fact
// that replaces a pinned fact is pinned too.
UNWIND $rows AS row
MATCH (new:Fact {id: row.new})
WHERE new.ns = $ns AND new.retired_at IS NULL
MATCH (old:Fact {id: row.old})
WHERE old.ns = $ns AND old.retired_at IS NULL
WITH row, new, old, coalesce(new.valid_from, new.recorded_at) AS ended
CREATE (new)-[:SUPERSEDES {at: datetime.statement(), actor: $actor, reason: row.reason}]->(old)
SET old.stated_valid_to = old.valid_to,
    old.status = 'superseded',
    old.retired_at = datetime.statement(),
    old.superseded_by = new.id,
    old.valid_to = CASE
      WHEN old.valid_to IS NOT NULL AND old.valid_to <= ended THEN old.valid_to
      WHEN old.valid_from IS NOT NULL AND old.valid_from > ended THEN old.valid_from
      ELSE ended END,
    new.pinned = coalesce(new.pinned, false) OR coalesce(old.pinned, false),
    new.valid_from_set_at = CASE
      WHEN new.valid_from IS NULL AND (new.valid_to IS NULL OR new.valid_to > ended)
        THEN datetime.statement()
      ELSE new.valid_from_set_at END,
    new.valid_from = CASE
      WHEN new.valid_from IS NULL AND (new.valid_to IS NULL OR new.valid_to > ended)
        THEN ended
      ELSE new.valid_from END
WITH row, new, old
CALL (row, new, old) {
  MATCH (new)-[c:CONTRADICTS]-(old)
  WHERE row.resolve AND c.resolved_at IS NULL
  SET c.resolved_at = datetime.statement(), c.resolution = row.reason, c.resolved_by = $actor,
      c.kept = new.id
  RETURN count(c) AS resolved
}
RETURN count(row) AS applied, sum(resolved) AS resolved
