"""``graphmem mcp``: serve graphmem's memory, history and audits to agent hosts over MCP."""

from __future__ import annotations

import asyncio

import click

from graphmem.cli.options import allow_options, bind_options
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
@bind_options(8765, host_help="HTTP address to bind.", port_help="HTTP port.")
@click.option(
    "--namespace",
    "--ns",
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
@allow_options(
    host_help="Over HTTP, another Host header value to accept, exactly as clients send it "
    "(repeatable; default: the bound address and port only).",
    origin_help="Over HTTP, another Origin to accept from browsers, exactly "
    "(scheme://host[:port]; repeatable; default: http:// and each allowed host, and https:// "
    "and each --allow-host).",
)
@click.option(
    "--no-auth",
    is_flag=True,
    help="Over HTTP on a loopback address, take requests without an API key (default: every "
    "request needs one, 'Authorization: Bearer <key>', from graphmem keys create).",
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
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    tools: str,
    no_auth: bool,
    read_only: bool,
    full_ids: bool,
    max_result_chars: int,
) -> None:
    """Serve memory to agent hosts over the Model Context Protocol (needs graphmem[mcp]).

    The server keeps one connection and the embedding model warm between calls. It is bound
    to one namespace (and those --allow-namespace adds); --read-only leaves out every tool
    that writes. Nothing but the protocol goes to stdout. Over HTTP, every request needs an API
    key whose namespaces and role allow the call (401 without one; --no-auth drops this on a
    loopback address), and a request whose Host is not the bound address (or an --allow-host)
    or whose Origin is not an allowed one is refused (421, 403), which keeps web pages from
    reaching the server through DNS rebinding. For many agents and a REST API, see graphmem
    serve. Host configurations: docs/guides/mcp.md.

    Example:

    \b
        claude mcp add graphmem -- graphmem mcp --tools all

    \b
        graphmem mcp --transport http --port 8765 --read-only --no-auth
    """
    try:
        from graphmem.edge.hosts import edge_policy
        from graphmem.mcp.options import McpOptions, tool_selection
        from graphmem.mcp.server import serve
    except ImportError as exc:
        raise ConfigurationError(
            "graphmem mcp needs the MCP SDK: pip install '<graphmem checkout or wheel>[mcp]' "
            f"({exc})"
        ) from None
    from graphmem.client.aio import AsyncMemory

    settings = settings_of(ctx)
    if transport == "http" and no_auth and not _loopback(host):
        raise click.UsageError(
            f"--no-auth is for a loopback address; on {host} every request needs an API key"
        )
    if transport == "stdio" and no_auth:
        raise click.UsageError("--no-auth is for --transport http (stdio needs no key)")
    options = McpOptions(
        namespace=namespace or settings.namespace,
        allowed=allowed,
        tools=tool_selection(tools, read_only=read_only),
        read_only=read_only,
        full_ids=full_ids,
        max_chars=max_result_chars,
        keyed=transport == "http" and not no_auth,
    )
    edge = None
    if transport == "http":
        edge = edge_policy(host, port, allowed_hosts, allowed_origins)
    elif allowed_hosts or allowed_origins:
        raise click.UsageError("--allow-host and --allow-origin are for --transport http")
    memory = AsyncMemory(
        settings,
        ns=options.namespace,
        embedder=embedder_for(settings),
        apply_schema=not read_only,
    )
    asyncio.run(
        serve(memory, options, transport=transport, host=host, port=port, edge=edge)  # type: ignore[arg-type]
    )


def _loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
