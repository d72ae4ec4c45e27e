// name: import_taken
// mode: read
// params: stage, ids: list<string>, staged: list<string>
// returns: taken, duplicates
// For a batch of an import into staging namespace $stage: which ids of $ids a fact, an episode
// or a consolidation run outside the staging namespace holds already (their constraints make
// them unique across the database: the import gives those a new id), and which of $staged
// (the same ids as the import now writes them) a node it staged holds already (the export
// names one node twice: refused). Each id is looked up through the unique constraints' and
// the staging namespace's indexes.
CALL () {
  UNWIND $ids AS id
  WITH id
  WHERE EXISTS { MATCH (f:Fact {id: id}) WHERE f.ns <> $stage }
     OR EXISTS { MATCH (e:Episode {id: id}) WHERE e.ns <> $stage }
     OR EXISTS { MATCH (r:ConsolidationRun {id: id}) WHERE r.ns <> $stage }
  RETURN collect(id) AS taken
}
CALL () {
  UNWIND $staged AS id
  WITH id
  WHERE EXISTS { MATCH (:Fact {ns: $stage, id: id}) }
     OR EXISTS { MATCH (:Episode {ns: $stage, id: id}) }
     OR EXISTS { MATCH (r:ConsolidationRun {id: id}) WHERE r.ns = $stage }
     OR EXISTS { MATCH (:Tombstone {ns: $stage, fact_id: id}) }
     OR EXISTS { MATCH (:Tombstone {ns: $stage, episode_id: id}) }
  RETURN collect(id) AS duplicates
}
RETURN taken, duplicates
