// name: recall_details
// mode: read
// params: ns, fact_ids, episode_ids, vector, expand, as_of, valid_at, include_retired, tags, since, until
// returns: facts, episodes
// What a recall keeps, in one statement: the facts ($fact_ids, checked again against the
// filters, since a supersession may have committed since the search) with their properties, the
// episodes they were derived from and (with $expand) the visible facts they reference or that
// reference them, one hop, with those facts' cosine similarity to the query (the hits' own
// similarity came with the search); and the episodes ($episode_ids) with their properties.
// A referenced fact that has been superseded leads to the fact that replaced it (the nearest,
// that is the earliest recorded, visible one up its SUPERSEDES chain), so a reference is not
// lost when its target is updated.
CALL () {
  UNWIND $fact_ids AS id
  MATCH (node:Fact {id: id})
  WHERE {{fact_visible}}
  WITH node AS f, {{fact_map}} AS fact, {{fact_provenance}} AS provenance
  RETURN collect({
    fact: fact,
    provenance: provenance,
    references: CASE WHEN $expand
      THEN COLLECT {
        MATCH (f)-[:REFERENCES]-(ref:Fact)
        WHERE ref.ns = $ns
        CALL (ref) {
          MATCH (ref)<-[:SUPERSEDES*0..]-(node:Fact)
          WHERE {{fact_visible}}
          RETURN node ORDER BY node.recorded_at, node.id LIMIT 1
        }
        RETURN {fact: {{fact_map}},
                similarity: vector.similarity.cosine(node.embedding, $vector),
                provenance: {{fact_provenance}},
                superseded_match: CASE WHEN node <> ref THEN ref.id END}
      }
      ELSE [] END
  }) AS facts
}
CALL () {
  UNWIND $episode_ids AS id
  MATCH (node:Episode {id: id})
  WHERE node.ns = $ns
  RETURN collect({episode: {{episode_map}}}) AS episodes
}
RETURN facts, episodes
