"""``graphmem bench``: write and recall speed on synthetic data, the embedding backends,
start-up, MCP, consolidation, and graphmem beside graphiti-core."""
