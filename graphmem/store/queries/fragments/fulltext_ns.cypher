// The clause of a fulltext query (for an index that also holds `ns`, migration 10) that
// requires its nodes to be of namespace $ns: Lucene then walks the namespace's entries
// instead of every match in the database. It has boost 0, so a node's score is its words'
// alone (a node that matched the namespace but none of the words, which only a query of stop
// words lets through, scores 0). The namespace is analysed as the text is, so the clause
// narrows the search without deciding it (another namespace whose name analyses the same,
// or any when the name is all stop words, may pass it): callers still check n.ns.
('+ns:"' + replace(replace($ns, '\\', '\\\\'), '"', '\\"') + '"^0')
