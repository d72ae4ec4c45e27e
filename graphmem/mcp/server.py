"""``graphmem mcp``: an MCP server on the official ``mcp`` SDK over one warm
:class:`AsyncMemory` (driver and embedder loaded once), over stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource
from mcp_types import ToolAnnotations

from graphmem import __version__
from graphmem.client.aio import AsyncMemory
from graphmem.mcp.guide import INSTRUCTIONS, UPDATING_MEMORY, schema_text
from graphmem.mcp.options import READ_TOOLS, McpOptions
from graphmem.mcp.tools import Tools
from graphmem.store.cypher import analyst_queries

Transport = Literal["stdio", "http"]
_DESTRUCTIVE = frozenset({"forget", "delete_memory", "resolve_contradiction", "consolidate"})


def build_server(memory: AsyncMemory, options: McpOptions) -> MCPServer:
    """The MCP server for this client and policy: its tools, resources and prompt."""
    server: MCPServer = MCPServer(
        "graphmem",
        title="graphmem memory",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )
    tools = Tools(memory, options)
    for name, fn in tools.functions().items():
        read = name in READ_TOOLS
        server.add_tool(
            fn,
            name=name,
            annotations=ToolAnnotations(
                read_only_hint=read,
                destructive_hint=None if read else name in _DESTRUCTIVE,
                open_world_hint=False,
            ),
            structured_output=False,
        )
    server.add_resource(
        TextResource(
            uri="graphmem://schema",
            name="schema",
            title="graphmem graph model",
            description="Labels, relationships, properties and the two-clock predicates.",
            mime_type="text/markdown",
            text=schema_text(),
        )
    )
    for name, q in sorted(analyst_queries().items()):
        server.add_resource(
            TextResource(
                uri=f"graphmem://cypher/{name}",
                name=f"cypher/{name}",
                description=q.description or name,
                mime_type="text/plain",
                text=q.path.read_text(encoding="utf-8") if q.path else q.text,
            )
        )

    @server.prompt(
        name="memory_guidelines",
        description="How to keep memory true: supersede and contradict instead of overwriting.",
    )
    def memory_guidelines() -> str:
        return UPDATING_MEMORY

    return server


@asynccontextmanager
async def warm_memory(memory: AsyncMemory) -> AsyncIterator[AsyncMemory]:
    """The client connected and its embedding model loaded before the first call."""
    async with memory:
        load = getattr(memory.embedder, "load", None)
        if callable(load):
            await asyncio.to_thread(load)
        yield memory


async def serve(
    memory: AsyncMemory,
    options: McpOptions,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/mcp",
) -> None:
    """Serve until the host closes stdio or the HTTP server is stopped."""
    server = build_server(memory, options)
    async with warm_memory(memory):
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await server.run_streamable_http_async(host=host, port=port, streamable_http_path=path)
