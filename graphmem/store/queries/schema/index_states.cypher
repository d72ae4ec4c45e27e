// name: index_states
// mode: read
// params: names
// returns: name, type, state, population, entity, labels, properties, options, failure, constraint
// The state of the named indexes (constraints' backing indexes included).
SHOW INDEXES
YIELD name, type, state, populationPercent, entityType, labelsOrTypes, properties, options,
      failureMessage, owningConstraint
WHERE name IN $names
RETURN name, type, state, populationPercent AS population, entityType AS entity,
       labelsOrTypes AS labels, properties, options, failureMessage AS failure,
       owningConstraint AS constraint
