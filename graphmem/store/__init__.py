"""Neo4j as graphmem stores in it: the Cypher loader and its queries, the schema and its
migrations, and running named queries with driver errors mapped in one place."""
