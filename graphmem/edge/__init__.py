"""The HTTP edge of a graphmem server, in plain ASGI (no web framework): the ``Host`` and
``Origin`` a request may carry (:mod:`~graphmem.edge.hosts`), the API key it must bring
(:mod:`~graphmem.edge.keys`), and graphmem's errors answered as JSON
(:mod:`~graphmem.edge.asgi`). ``graphmem serve`` puts it in front of its REST API and MCP,
``graphmem mcp --transport http`` in front of MCP alone."""
