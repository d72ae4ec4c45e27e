"""``graphmem mcp``: an MCP server on the official ``mcp`` SDK over one warm
:class:`AsyncMemory` (driver and embedder loaded once), over stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import TextResource
from mcp_types import ListToolsResult, ToolAnnotations
from pydantic import ValidationError

from graphmem import __version__
from graphmem.client.aio import AsyncMemory
from graphmem.core.actor import acting_as
from graphmem.edge.bookmarks import request_causal
from graphmem.edge.hosts import EdgePolicy, HostOriginCheck, edge_policy
from graphmem.edge.keys import SCOPE_KEY, KeyCheck, KeyGate
from graphmem.embed.embedder import load_model
from graphmem.errors import GraphmemError
from graphmem.mcp.base import CALL_KEY
from graphmem.mcp.guide import instructions, memory_guidelines, schema_text
from graphmem.mcp.options import READ_TOOLS, WRITE_TOOLS, McpOptions, tool_role
from graphmem.mcp.tools import Tools
from graphmem.models.keys import ApiKey, Role
from graphmem.store.bookmarks import Causal, following
from graphmem.store.cypher import analyst_queries

logger = logging.getLogger("graphmem.mcp")
Transport = Literal["stdio", "http"]
_DESTRUCTIVE = frozenset({"forget", "retract_memory", "resolve_contradiction", "consolidate"})


class GraphmemServer(MCPServer):
    """The SDK's server, but for how a call whose arguments do not fit a tool is told: one
    line of graphmem's (``InvalidInputError: forget: reason: a value is required``) instead
    of pydantic's report with its links.

    Only the SDK's own argument error is rewritten: a :class:`ToolError` itself (not a
    subclass such as ``UnexpectedToolError``, a crash that must stay one) caused by a
    pydantic ``ValidationError``."""

    #: Set by :func:`build_server` for ``graphmem serve``: each call then runs with the API
    #: key its HTTP request carried (checked by the service before the request got here).
    keyed = False

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if not self.keyed:
            # No key: the changes are the MCP client's, by the name it gave when it connected.
            with acting_as(client_actor(context)):
                return await self._call_tool(name, arguments, context)
        key = call_key(context)
        if key is None:
            raise ToolError("AuthenticationError: this server needs an API key")
        role: Role = tool_role(name)
        if not key.allows(role):
            raise ToolError(
                f"PermissionDeniedError: the API key {key.name!r} has the role {key.role!r}; "
                f"{name} needs {role!r}"
            )
        token = CALL_KEY.set(key)
        try:
            with acting_as(key.name), following(call_causal(context, name)):
                return await self._call_tool(name, arguments, context)
        finally:
            CALL_KEY.reset(token)

    async def _handle_list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        """The tools, but over a keyed server only those the request's API key may call (a
        ``read`` key sees no write tool)."""
        listed = await super()._handle_list_tools(ctx, params)
        if not self.keyed:
            return listed
        key = scope_key(getattr(ctx, "request", None))
        allowed = [t for t in listed.tools if key is not None and key.allows(tool_role(t.name))]
        return listed.model_copy(update={"tools": allowed})

    async def _call_tool(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if type(exc) is ToolError and isinstance(cause, ValidationError):
                raise ToolError(argument_error(name, cause)) from None
            raise


def call_key(context: Any) -> ApiKey | None:
    """The API key the service put on the HTTP request of this call, if any."""
    return scope_key(getattr(getattr(context, "request_context", None), "request", None))


def client_actor(context: Any) -> str:
    """The actor of a call without an API key: ``mcp:`` and the name the MCP client gave in
    its ``initialize`` request (``clientInfo.name``), or ``mcp`` when it gave none."""
    session = getattr(getattr(context, "request_context", None), "session", None)
    params = getattr(session, "client_params", None)
    name = getattr(getattr(params, "client_info", None), "name", None)
    if not isinstance(name, str) or not name.strip():
        return "mcp"
    return "mcp:" + " ".join(name.split())[:100]


def scope_key(request: Any) -> ApiKey | None:
    """The API key the service put on this HTTP request, if any."""
    scope = getattr(request, "scope", None)
    key = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    return key if isinstance(key, ApiKey) else None


def call_causal(context: Any, tool: str) -> Causal:
    """The bookmarks this call follows (its HTTP request's ``Graphmem-Bookmark``); a write
    tool's result reports those of its last transaction (``bookmark``)."""
    request = getattr(getattr(context, "request_context", None), "request", None)
    given = request_causal(getattr(request, "scope", None))
    return Causal(given.given if given is not None else (), report=tool in WRITE_TOOLS)


def argument_error(tool: str, error: ValidationError) -> str:
    """A tool's argument errors in one line: each field's path and what is wrong with it."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        what = "a value is required" if item["type"] == "missing" else item["msg"]
        problems.append(f"{where}: {what[0].lower()}{what[1:]}" if what else where)
    return f"InvalidInputError: {tool}: " + "; ".join(problems)


def build_server(memory: AsyncMemory, options: McpOptions) -> MCPServer:
    """The MCP server for this client and policy: its tools, resources and prompt."""
    server = GraphmemServer(
        "graphmem",
        title="graphmem memory",
        instructions=instructions(options.tools),
        version=__version__,
        log_level="WARNING",
    )
    server.keyed = options.keyed
    tools = Tools(memory, options)
    for name, fn in tools.functions().items():
        read = name in READ_TOOLS
        server.add_tool(
            fn,
            name=name,
            # The docstring as one line, without its source indentation.
            description=" ".join(inspect.cleandoc(fn.__doc__ or "").split()),
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
    def guidelines() -> str:
        return memory_guidelines(options.tools)

    return server


#: Seconds after start at which the warm-up begins if no host has listed the tools by then.
WARM_UP_AFTER = 2.0


class WarmUp:
    """Connects the client and loads its embedding model in the background, once the host's
    handshake is over: when the tools are first listed or called (MCP middleware), or
    :data:`WARM_UP_AFTER` seconds after start, whichever comes first. Until then the CPU is
    the handshake's, so a host that starts a server per chat gets its tool list at once.

    A call that comes before the warm-up ends waits for what it needs: the client connects
    on a call's first transaction (calls share one connection) and the embedder loads on its
    first embedding (calls share one load). A warm-up that fails is logged; the calls try
    again and report the error themselves. Once stopped, it never starts again."""

    def __init__(self, memory: AsyncMemory) -> None:
        self._memory = memory
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    def start(self) -> None:
        if self._task is None and not self._stopped:
            self._task = asyncio.get_running_loop().create_task(self._run())
            self._task.add_done_callback(_log_failure)

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        result = await call_next(ctx)
        if getattr(ctx, "method", None) in ("tools/list", "tools/call"):
            self.start()
        return result

    async def _run(self) -> None:
        memory = self._memory

        async def connect() -> None:
            try:
                await memory.connect()
            except GraphmemError as exc:
                logger.error("not connected yet (each call tries again): %s", exc)

        async def load() -> None:
            try:
                await asyncio.to_thread(load_model, memory.embedder)
            except GraphmemError as exc:
                logger.error("the embedding model did not load (each call tries again): %s", exc)

        await asyncio.gather(connect(), load())

    async def stop(self) -> None:
        """Cancel the warm-up if it is under way and wait for it to end. It raises nothing of
        the warm-up's (a failure is logged as it happens), so what follows (closing the
        client) always runs; only a cancellation of ``stop`` itself comes through."""
        self._stopped = True
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])


def _log_failure(task: asyncio.Task[None]) -> None:
    """Log what a warm-up raised beyond graphmem's own errors (which it logs itself)."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.error(
            "the warm-up failed (each call tries again): %s: %s",
            type(exc).__name__,
            exc,
            exc_info=exc,
        )


@asynccontextmanager
async def warm_memory(
    memory: AsyncMemory, server: MCPServer | None = None, *, after: float = WARM_UP_AFTER
) -> AsyncIterator[AsyncMemory]:
    """The client, warmed up in the background (:class:`WarmUp`) once ``server``'s host has
    listed its tools or ``after`` seconds have passed, and closed at the end."""
    warm_up = WarmUp(memory)
    if server is not None:
        server.middleware.append(warm_up)
    timer = asyncio.get_running_loop().call_later(after, warm_up.start)
    try:
        yield memory
    finally:
        timer.cancel()
        try:
            await warm_up.stop()
        finally:
            await memory.close()


async def serve(
    memory: AsyncMemory,
    options: McpOptions,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/mcp",
    edge: EdgePolicy | None = None,
) -> None:
    """Serve until the host closes stdio or the HTTP server is stopped. Over HTTP, every
    request's ``Host`` and ``Origin`` are checked against ``edge`` (default: the bound
    address, :func:`~graphmem.edge.hosts.edge_policy`), and with ``options.keyed`` its API key."""
    server = build_server(memory, options)
    keys = KeyCheck(memory) if options.keyed else None
    async with warm_memory(memory, server):
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await serve_http(server, host=host, port=port, path=path, edge=edge, keys=keys)


async def serve_http(
    server: MCPServer,
    *,
    host: str,
    port: int,
    path: str,
    edge: EdgePolicy | None = None,
    keys: KeyCheck | None = None,
) -> None:
    """The MCP server's streamable HTTP app behind :class:`HostOriginCheck` (and, given
    ``keys``, :class:`~graphmem.edge.keys.KeyGate`), on uvicorn."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    policy = edge or edge_policy(host, port)
    # The SDK's own check matches origins by prefix and knows only three loopback names;
    # graphmem's, in front of it, matches exactly whatever the address.
    app = server.streamable_http_app(
        streamable_http_path=path,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=host,
    )
    gated = app if keys is None else KeyGate(app, keys)
    config = uvicorn.Config(
        HostOriginCheck(gated, policy), host=host, port=port, log_level="warning"
    )
    await uvicorn.Server(config).serve()
