// args: node, at
// Invariant 2, believed at transaction time `at`: the fact `node` was recorded by then and not
// yet retired then.
(node.recorded_at <= at AND (node.retired_at IS NULL OR node.retired_at > at))
