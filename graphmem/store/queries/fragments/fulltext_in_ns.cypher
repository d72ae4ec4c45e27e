// args: lucene_field, lucene_words
// The fulltext query for `lucene_words` (escaped user text, any word may match) in the field
// `lucene_field` of a fulltext index that also holds `ns`, its nodes required to be of
// namespace $ns (fulltext_ns).
('+' + lucene_field + ':(' + lucene_words + ') ' + {{fulltext_ns}})
