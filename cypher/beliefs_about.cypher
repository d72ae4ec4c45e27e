// name: beliefs_about
// mode: read
// params: ns: string, query: string, limit: integer
// returns: id, text, score, status, recorded_at, valid_from, valid_to, source, tags
// example: {"ns": "demo", "query": "works OR employer", "limit": 10}
// What graphmem believes now about a topic: the facts of the fulltext index fact_text (on
// Fact.text, English analyzer) that match $query and are still believed (retired_at IS NULL),
// best match first, with the index's relevance score (higher is better; only comparable
// within one query).
// $query is Lucene query syntax: words (any of them matches: `tea coffee`), AND / OR / NOT,
// "exact phrases", wildcards (`hik*`), fuzzy terms (`Globx~`), field-free (it searches the
// text; the index also holds the namespace, to which the search is confined). Characters Lucene
// reserves (+ - && || ! ( ) { } [ ] ^ " ~ * ? : \ /) are escaped with a backslash to be
// searched as text; a malformed query fails with Lucene's ParseException. Forgotten facts are
// not in the index.
CALL db.index.fulltext.queryNodes('fact_text', {{fulltext_in_ns('text', $query)}})
YIELD node, score
WITH node, score
WHERE node.ns = $ns AND node.retired_at IS NULL AND score > 0
RETURN node.id AS id, node.text AS text, score, node.status AS status,
       node.recorded_at AS recorded_at, node.valid_from AS valid_from,
       node.valid_to AS valid_to, node.source AS source, node.tags AS tags
ORDER BY score DESC, recorded_at DESC, id
LIMIT $limit
