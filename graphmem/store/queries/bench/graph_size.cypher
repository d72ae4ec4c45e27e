// name: graph_size
// mode: read
// params:
// returns: facts, episodes
// How many :Fact and :Episode nodes the whole database holds, across namespaces: only counts,
// no content. The benchmark reports it beside recall latency, since the vector and fulltext
// indexes a recall searches span the whole database.
CALL () { MATCH (f:Fact) RETURN count(f) AS facts }
CALL () { MATCH (e:Episode) RETURN count(e) AS episodes }
RETURN facts, episodes
