"""``graphmem mcp``: serve graphmem's memory, history and audits to agent hosts over MCP."""

from __future__ import annotations

import asyncio

import click

from graphmem.cli.root import embedder_for, main, settings_of
from graphmem.errors import ConfigurationError


@main.command("mcp")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: the host starts graphmem and talks over stdin/stdout. http: streamable HTTP "
    "at http://HOST:PORT/mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP address to bind.")
@click.option(
    "--port", type=click.IntRange(1, 65_535), default=8765, show_default=True, help="HTTP port."
)
@click.option(
    "--namespace",
    "namespace",
    metavar="NAMESPACE",
    help="The namespace calls use when they name none (default: the GRAPHMEM_NAMESPACE setting).",
)
@click.option(
    "--allow-namespace",
    "allowed",
    metavar="NAMESPACE",
    multiple=True,
    help="Another namespace a call may name (repeatable); any other is refused.",
)
@click.option(
    "--tools",
    default="core",
    show_default=True,
    help="core (add_memory, search_memories, get_context, get_history, forget), all, or a "
    "comma-separated list of tool names.",
)
@click.option("--read-only", is_flag=True, help="Expose only the tools that read and audit.")
@click.option(
    "--full-ids", is_flag=True, help="Show whole ids instead of 8-character unique prefixes."
)
@click.option(
    "--max-result-chars",
    type=click.IntRange(1_000, 1_000_000),
    default=16_000,
    show_default=True,
    help="Cap on one tool result's JSON; longer lists end with a 'more' marker.",
)
@click.pass_context
def mcp_command(
    ctx: click.Context,
    transport: str,
    host: str,
    port: int,
    namespace: str | None,
    allowed: tuple[str, ...],
    tools: str,
    read_only: bool,
    full_ids: bool,
    max_result_chars: int,
) -> None:
    """Serve memory to agent hosts over the Model Context Protocol (needs graphmem[mcp]).

    The server keeps one connection and the embedding model warm between calls. It is bound
    to one namespace (and those --allow-namespace adds); --read-only leaves out every tool
    that writes. Nothing but the protocol goes to stdout. Host configurations:
    docs/guides/mcp.md.

    Example:

    \b
        claude mcp add graphmem -- graphmem mcp --tools all

    \b
        graphmem mcp --transport http --port 8765 --read-only
    """
    try:
        from graphmem.mcp.options import McpOptions, tool_selection
        from graphmem.mcp.server import serve
    except ImportError as exc:
        raise ConfigurationError(
            f"graphmem mcp needs the MCP SDK: pip install 'graphmem[mcp]' ({exc})"
        ) from None
    from graphmem.client.aio import AsyncMemory

    settings = settings_of(ctx)
    options = McpOptions(
        namespace=namespace or settings.namespace,
        allowed=allowed,
        tools=tool_selection(tools, read_only=read_only),
        read_only=read_only,
        full_ids=full_ids,
        max_chars=max_result_chars,
    )
    if transport == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(
            f"graphmem mcp: listening on {host} without authentication; anyone who reaches "
            "it can use this memory",
            err=True,
        )
    memory = AsyncMemory(
        settings,
        ns=options.namespace,
        embedder=embedder_for(settings),
        apply_schema=not read_only,
    )
    asyncio.run(serve(memory, options, transport=transport, host=host, port=port))  # type: ignore[arg-type]
