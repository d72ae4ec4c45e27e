// A fact the index returned (`node`, `score`) as a recall candidate: one recall may return
// ({{fact_visible}}), or one superseded in the namespace, which stands for the
// fact that replaced it (see fact_successors). Anything else is null, which collect() drops.
CASE
  WHEN {{fact_visible}} THEN {node: node, score: score, head: null}
  WHEN node.ns = $ns AND node.superseded_by IS NOT NULL
    THEN {node: node, score: score, superseded: true}
END
