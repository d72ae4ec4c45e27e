// name: recall_details
// mode: read
// params: ns, fact_ids, past, episode_ids, vector, expand, pairs, as_of, valid_at, include_retired, tags, since, until
// returns: facts, episodes
// What a recall keeps, in one statement: the facts ($fact_ids) with their properties, the
// episodes they were derived from and (with $expand) the visible facts they reference or that
// reference them, one hop, with those facts' cosine similarity to the query (the hits' own
// similarity came with the search); and the episodes ($episode_ids) with their properties
// and (with $pairs) their cosine similarity to each other episode asked for, each pair once
// (under the episode with the smaller id).
// Each fact is checked again against the filters, since a supersession may have committed
// since the search: one that is no longer visible leads to the fact that replaced it (the
// nearest, that is the earliest recorded, visible one up its SUPERSEDES chain), returned under
// the `id` asked for, and so does a referenced fact, so that neither a hit nor a reference is
// lost when its fact is updated meanwhile. A superseded fact among $past (those true in a
// period the question names, see graphmem.core.recall.cues) is returned itself.
CALL () {
  UNWIND $fact_ids AS id
  MATCH (found:Fact {id: id})
  WHERE found.ns = $ns
  CALL (found) {
    WITH found AS node
    WHERE node.id IN $past AND node.status = 'superseded'
    RETURN node
    UNION
    WITH found AS old
    WHERE NOT (old.id IN $past AND old.status = 'superseded')
    {{fact_head_walk}}
  }
  WITH id, node AS f, CASE WHEN node <> found THEN found.id END AS superseded_match,
       {{fact_map}} AS fact, {{fact_provenance}} AS provenance
  RETURN collect({
    id: id,
    fact: fact,
    superseded_match: superseded_match,
    provenance: provenance,
    references: CASE WHEN $expand
      THEN COLLECT {
        MATCH (f)-[:REFERENCES]-(found:Fact)
        WHERE found.ns = $ns
        {{fact_head}}
        RETURN {fact: {{fact_map}},
                similarity: vector.similarity.cosine(node.embedding, $vector),
                provenance: {{fact_provenance}},
                superseded_match: CASE WHEN node <> found THEN found.id END}
      }
      ELSE [] END
  }) AS facts
}
CALL () {
  UNWIND $episode_ids AS id
  MATCH (found:Episode {id: id})
  WHERE found.ns = $ns
  WITH collect(found) AS kept
  RETURN [node IN kept | {
    episode: {{episode_map}},
    similar: CASE WHEN $pairs
      THEN [other IN kept WHERE other.id > node.id |
            {id: other.id, similarity: vector.similarity.cosine(node.embedding, other.embedding)}]
      ELSE [] END
  }] AS episodes
}
RETURN facts, episodes
