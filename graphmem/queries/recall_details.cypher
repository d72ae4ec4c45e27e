// name: recall_details
// mode: read
// params: ns, fact_ids, episode_ids, vector, expand, as_of, valid_at, include_retired, tags, since, until
// returns: facts, episodes
// What a recall keeps, in one statement: the facts ($fact_ids) with their properties, the
// episodes they were derived from and (with $expand) the visible facts they reference or that
// reference them, one hop, with those facts' cosine similarity to the query (the hits' own
// similarity came with the search); and the episodes ($episode_ids) with their properties.
CALL () {
  UNWIND $fact_ids AS id
  MATCH (node:Fact {id: id})
  WHERE node.ns = $ns
  WITH node AS f, {{fact_map}} AS fact, {{fact_provenance}} AS provenance
  RETURN collect({
    fact: fact,
    provenance: provenance,
    references: CASE WHEN $expand
      THEN [(f)-[:REFERENCES]-(node:Fact) WHERE {{fact_visible}}
            | {fact: {{fact_map}},
               similarity: vector.similarity.cosine(node.embedding, $vector),
               provenance: {{fact_provenance}}}]
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
