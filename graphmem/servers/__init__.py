"""Where the Neo4j is: the connection, and the servers graphmem runs itself (local, Docker,
scratch)."""
