"""recall: its typed options and scope, the search over both indexes, fusion and the gate."""
