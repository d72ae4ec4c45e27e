// name: recall_episode_details
// mode: read
// params: ns, ids, vector
// returns: episode, similarity
// The episodes a recall keeps, with their cosine similarity to the query.
UNWIND $ids AS id
MATCH (node:Episode {id: id})
WHERE node.ns = $ns
RETURN {{episode_map}} AS episode,
       vector.similarity.cosine(node.embedding, $vector) AS similarity
