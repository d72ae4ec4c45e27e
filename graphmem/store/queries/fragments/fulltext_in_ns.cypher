// args: lucene_field, lucene_words
// The fulltext query for `lucene_words` (escaped user text, any word may match) in the field
// `lucene_field` of a fulltext index that also holds `ns` (migration 10), its nodes required
// to be of namespace $ns: Lucene then walks the namespace's entries instead of every match in
// the database. The namespace clause has boost 0, so a node's score is its words' alone (a
// node that matched the namespace but none of the words, which only a query of stop words
// lets through, scores 0). The namespace is analysed as the text is, so the clause narrows
// the search without deciding it (another namespace whose name analyses the same, or any when
// the name is all stop words, may pass it): callers still check n.ns.
('+' + lucene_field + ':(' + lucene_words + ') +ns:"'
 + replace(replace($ns, '\\', '\\\\'), '"', '\\"') + '"^0')
