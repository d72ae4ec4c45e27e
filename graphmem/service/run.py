"""Running the service: uvicorn on one port until SIGINT or SIGTERM, then a graceful stop
(no new connections, the requests in flight finish within ``graceful_seconds``, then the
client closes)."""

from __future__ import annotations

import math

from graphmem.client.aio import AsyncMemory
from graphmem.service.app import ServeOptions, build_app


async def serve(
    memory: AsyncMemory,
    options: ServeOptions,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    graceful_seconds: float = 30.0,
) -> None:
    """Serve until stopped."""
    import uvicorn

    config = uvicorn.Config(
        build_app(memory, options),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,  # graphmem's own access log (graphmem.service.observe) replaces it
        timeout_graceful_shutdown=math.ceil(graceful_seconds),
        # The service answers with its own JSON errors and keeps no per-connection state.
        server_header=False,
        proxy_headers=False,
    )
    await uvicorn.Server(config).serve()


__all__ = ["serve"]
