// name: index_others
// mode: read
// params: names
// returns: name, type, labels, properties, constraint
// The node indexes not named in $names (other applications' or a person's), constraints'
// backing indexes included: one of them may cover what an index of graphmem's would.
SHOW INDEXES
YIELD name, type, entityType, labelsOrTypes, properties, owningConstraint
WHERE entityType = 'NODE' AND NOT name IN $names AND labelsOrTypes IS NOT NULL
RETURN name, type, labelsOrTypes AS labels, properties, owningConstraint AS constraint
