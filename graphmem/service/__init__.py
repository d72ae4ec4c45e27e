"""``graphmem serve``: one process that keeps the driver and the embedder warm and serves, on
one port, a versioned REST API (:mod:`graphmem.service.routes`, generated from the table of
operations) and MCP over streamable HTTP, both behind the HTTP edge it shares with ``graphmem
mcp`` (:mod:`graphmem.edge`: Host and Origin, the API keys); :mod:`graphmem.service.app` puts
them together and :mod:`graphmem.service.run` runs them. How errors travel over HTTP, which the
remote clients share, is :mod:`graphmem.models.wire`."""
