// name: server_version
// mode: read
// params:
// returns: version, edition
// The Neo4j server's version and edition.
CALL dbms.components() YIELD name, versions, edition
RETURN versions[0] AS version, edition
