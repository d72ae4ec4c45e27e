"""``graphmem serve``: one process that keeps the driver and the embedder warm and serves, on
one port, a versioned REST API (:mod:`graphmem.service.rest`) and MCP over streamable HTTP,
both behind API keys (:mod:`graphmem.service.auth`); :mod:`graphmem.service.app` puts them
together and :mod:`graphmem.service.run` runs them. :mod:`graphmem.service.wire` is the part
the remote clients share: how errors travel over HTTP."""
