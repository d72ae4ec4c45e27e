"""``graphmem bench``: write and recall speed on synthetic data, and beside graphiti-core.

Nothing in the client, core or store rooms imports it."""
