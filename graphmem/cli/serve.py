"""``graphmem serve``: the REST API and MCP over HTTP on one port, behind API keys."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import click

from graphmem.cli.options import allow_options, bind_options
from graphmem.cli.root import embedder_for, main, settings_of
from graphmem.errors import ConfigurationError

if TYPE_CHECKING:
    from graphmem.service.logs import LogFormat, LogLevel
    from graphmem.service.metrics import MetricsMode
    from graphmem.settings import GraphmemSettings

#: Seconds each Neo4j transaction of the service may run unless GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT
#: says otherwise.
DEFAULT_TRANSACTION_TIMEOUT = 120.0
#: Seconds the service's driver retries a transaction that lost its connection or failed
#: transiently, unless GRAPHMEM_NEO4J_MAX_RETRY_TIME says otherwise (the driver's own is 30 s).
DEFAULT_MAX_RETRY_TIME = 5.0


@main.command("serve")
@bind_options(8080, host_help="Address to bind.", port_help="Port.")
@allow_options(
    host_help="Another Host header MCP requests may carry, such as the name of the TLS proxy in "
    "front (repeatable; default: the bound address and port).",
    origin_help="Another Origin browsers may send to /mcp, exactly (repeatable).",
)
@click.option(
    "--key-cache",
    type=click.FloatRange(0, 300),
    default=5.0,
    show_default=True,
    help="Seconds a checked API key is remembered; a revoked key stops working within it.",
)
@click.option(
    "--max-body-mb",
    type=click.FloatRange(0.01, 1024),
    default=8.0,
    show_default=True,
    help="The largest request body, in MB (413 above it).",
)
@click.option(
    "--max-import-mb",
    type=click.FloatRange(0.01, 65_536),
    default=512.0,
    show_default=True,
    help="The largest namespace import (admin keys), in MB.",
)
@click.option(
    "--timeout",
    "request_timeout",
    type=click.FloatRange(1, 3600),
    default=60.0,
    show_default=True,
    help="Seconds a REST request may run before it is answered 504 (export and import are "
    "not timed).",
)
@click.option(
    "--graceful",
    type=click.FloatRange(0, 600),
    default=30.0,
    show_default=True,
    help="On SIGTERM or Ctrl-C, seconds the requests in flight get to finish.",
)
@click.option(
    "--tools",
    default="all",
    show_default=True,
    help="The MCP tools served: core, all, or a comma-separated list (each call is still "
    "checked against its key's role).",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="The log on stderr: key=value lines, or one JSON object a line.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error", "off"]),
    default="info",
    show_default=True,
    help="info logs one line per request (the access log); warning and error only problems "
    "(a 5xx answer is an error); off nothing.",
)
@click.option(
    "--metrics",
    type=click.Choice(["on", "public", "off"]),
    default="on",
    show_default=True,
    help="Prometheus metrics at /metrics: on answers loopback clients (not through a proxy) "
    "and admin keys, public everyone, off no one (and collects none).",
)
@click.pass_context
def serve_command(
    ctx: click.Context,
    host: str,
    port: int,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    key_cache: float,
    max_body_mb: float,
    max_import_mb: float,
    request_timeout: float,
    graceful: float,
    tools: str,
    log_format: LogFormat,
    log_level: LogLevel,
    metrics: MetricsMode,
) -> None:
    """Serve memory to many agents: a REST API under /v1 (OpenAPI at /openapi.json, docs at
    /docs), MCP over streamable HTTP at /mcp, /health and /ready, on one port (needs
    graphmem[serve]).

    Every request to /v1 and /mcp needs an API key (graphmem keys create) as
    'Authorization: Bearer <key>': 401 without a good one, 403 for a namespace or an operation
    outside it. The key's name is the actor of every change it makes. Each Neo4j transaction
    may run 120 s (GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT) before it is rolled back. While Neo4j
    does not answer, every keyed request is answered 503 at once (Retry-After: 1). The process
    keeps the driver and the embedding model warm and holds no state of its own: run several
    behind a load balancer on one Neo4j. Put a TLS proxy in front of it for anything beyond loopback
    (docs/guides/serve.md).

    Each request is logged on one line with its request id (X-Request-Id, echoed on every
    answer); /metrics serves Prometheus metrics; with the otel extra, the standard OTEL_*
    variables (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT) turn on OpenTelemetry
    traces (docs/operations/observability.md).

    Example:

    \b
        graphmem keys create my-agent --ns user-42
        graphmem serve --port 8080
    """
    try:
        from graphmem.edge.hosts import edge_policy
        from graphmem.mcp.options import tool_selection
        from graphmem.service.app import ServeOptions
        from graphmem.service.logs import configure_logging
        from graphmem.service.run import serve
    except ImportError as exc:
        raise ConfigurationError(
            "graphmem serve needs its extra: pip install '<graphmem checkout or wheel>[serve]' "
            f"({exc})"
        ) from None
    from graphmem.client.aio import AsyncMemory
    from graphmem.client.service_secret import service_signer

    configure_logging(log_format, log_level)
    from graphmem.telemetry import configure_tracing

    traced = configure_tracing()
    settings = settings_of(ctx)
    # The secret that signs the keys, read (or made) before the first request needs it.
    service_signer(settings)
    settings = _service_defaults(settings)
    options = ServeOptions(
        edge=edge_policy(host, port, allowed_hosts, allowed_origins),
        namespace=settings.namespace,
        key_cache_seconds=key_cache,
        max_body_bytes=int(max_body_mb * 1024 * 1024),
        max_import_bytes=int(max_import_mb * 1024 * 1024),
        request_timeout=request_timeout,
        tools=tool_selection(tools, read_only=False),
        metrics=metrics,
    )
    memory = AsyncMemory(settings, embedder=embedder_for(settings))
    where = f"http://{host}:{port}"
    click.echo(f"graphmem serve: {where} (UI /ui, REST /v1, MCP /mcp, docs /docs)", err=True)
    if traced:
        click.echo("graphmem serve: OpenTelemetry traces on (OTEL_* variables)", err=True)
    asyncio.run(serve(memory, options, host=host, port=port, graceful_seconds=graceful))


def _service_defaults(settings: GraphmemSettings) -> GraphmemSettings:
    """The settings with the service's own limits where they set none."""
    if settings.neo4j_transaction_timeout is None:
        # A service answers every request: a transaction that waits without end (on a lock a
        # schema change holds) is rolled back instead, and the caller told.
        settings = settings.model_copy(
            update={"neo4j_transaction_timeout": DEFAULT_TRANSACTION_TIMEOUT}
        )
    if settings.neo4j_max_retry_time is None:
        # A write in flight when Neo4j goes away is answered within seconds, not half a minute.
        settings = settings.model_copy(update={"neo4j_max_retry_time": DEFAULT_MAX_RETRY_TIME})
    return settings
