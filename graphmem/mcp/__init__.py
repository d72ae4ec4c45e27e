"""The MCP server (``graphmem mcp``, extra ``graphmem[mcp]``): graphmem's memory, history and
audits as tools for any agent host. :mod:`~graphmem.mcp.options` holds the operator's policy,
:mod:`~graphmem.mcp.tools` the tools, :mod:`~graphmem.mcp.shape` the compact JSON they return,
:mod:`~graphmem.mcp.guide` the instructions, prompt and resources, and
:mod:`~graphmem.mcp.server` the server and its transports (over HTTP, behind the same edge as
``graphmem serve``: :mod:`graphmem.edge`)."""
