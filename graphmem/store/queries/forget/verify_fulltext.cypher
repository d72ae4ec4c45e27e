// name: verify_fulltext
// mode: read
// params: ns, phrase, k
// returns: index, id, text
// The facts and episodes of the namespace whose words match the fulltext query $phrase (made
// from a text the verification looks for), from graphmem's two fulltext indexes. An episode's
// content only, not its speaker: what was erased is the text, and a speaker's name in the
// phrase would list every message of that speaker.
CALL () {
  CALL db.index.fulltext.queryNodes('fact_text', {{fulltext_in_ns('text', $phrase)}},
                                    {limit: $k}) YIELD node, score
  WHERE node.ns = $ns AND score > 0
  RETURN 'fact_text' AS index, node.id AS id, node.text AS text
  UNION ALL
  CALL db.index.fulltext.queryNodes('episode_content', {{fulltext_in_ns('content', $phrase)}},
                                    {limit: $k}) YIELD node, score
  WHERE node.ns = $ns AND score > 0
  RETURN 'episode_content' AS index, node.id AS id, node.content AS text
}
RETURN index, id, text
