// name: consolidate_gate
// mode: write
// params: ns
// returns: ns
// Creates the namespace's consolidation state when missing and write-locks it for the rest of
// the transaction, so that two runs that start at once are serialised here (the transaction
// then reads it with consolidate_gate_read).
MERGE (s:ConsolidationState {ns: $ns})
SET s.graphmem_lock = true
REMOVE s.graphmem_lock
RETURN s.ns AS ns
