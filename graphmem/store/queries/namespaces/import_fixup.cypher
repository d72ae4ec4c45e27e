// name: import_fixup
// mode: write
// params: stage, rows
// returns: changed
// Sets row.changes on each staged node of an import (row.eid, in staging namespace $stage):
// the references to ids the import gave a new id, once it knows them all (a fact may name one
// written after it).
UNWIND $rows AS row
MATCH (n)
WHERE elementId(n) = row.eid AND n.ns = $stage
SET n += row.changes
RETURN count(n) AS changed
