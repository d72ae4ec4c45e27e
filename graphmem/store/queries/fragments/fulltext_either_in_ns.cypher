// args: lucene_field, other_field, lucene_words
// The fulltext query for `lucene_words` (escaped user text, any word may match) in either
// field, `lucene_field` or `other_field`, of a fulltext index that also holds `ns`, its nodes
// required to be of namespace $ns (fulltext_ns). A node scores for its words in both fields.
('+(' + lucene_field + ':(' + lucene_words + ') ' + other_field + ':(' + lucene_words + ')) '
 + {{fulltext_ns}})
