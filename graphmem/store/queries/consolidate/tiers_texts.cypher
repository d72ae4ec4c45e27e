// name: tiers_texts
// mode: read
// params: ns, ids
// returns: id, text
// The texts of the facts $ids (the tier pass's candidates for the hot tier, whose size counts).
MATCH (f:Fact {ns: $ns})
WHERE f.id IN $ids
RETURN f.id AS id, f.text AS text
