"""What the agent-framework adapters share: calling any graphmem client (``Memory``,
``AsyncMemory``, ``RemoteMemory``, ``AsyncRemoteMemory``) on the framework's side of the
sync/async line, with the writes attributed to the adapter, and importing the framework with an
error that names the extra to install."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeAlias

from graphmem.client.api_aio import AsyncMemoryAPI
from graphmem.client.api_sync import MemoryAPI
from graphmem.core.actor import acting_as
from graphmem.errors import ClientUsageError

#: Any of graphmem's clients: the library (``Memory``, ``AsyncMemory``) or the HTTP client of
#: ``graphmem serve`` (``RemoteMemory``, ``AsyncRemoteMemory``).
AnyMemory: TypeAlias = MemoryAPI | AsyncMemoryAPI


def missing_extra(extra: str, framework: str, cause: ImportError) -> ImportError:
    """The error an adapter raises when its framework is not installed: it names the extra."""
    return ImportError(
        f"graphmem's {framework} adapter needs {framework} ({cause.name or cause}): "
        f"pip install 'graphmem[{extra}]'"
    )


def check_client(memory: object) -> AnyMemory:
    """``memory`` itself, refused with a clear error unless it is a graphmem client."""
    if not isinstance(memory, MemoryAPI | AsyncMemoryAPI):
        raise ClientUsageError(
            "the adapter takes a graphmem client (Memory, AsyncMemory, RemoteMemory or "
            f"AsyncRemoteMemory), not {type(memory).__name__}"
        )
    return memory


async def call_async(
    memory: AnyMemory, actor: str, method: str, /, *args: Any, **kwargs: Any
) -> Any:
    """``memory.<method>(*args, **kwargs)`` awaited, writes attributed to ``actor``; a sync
    client runs in a worker thread (which carries the actor), so the event loop goes on."""
    with acting_as(actor):
        bound: Callable[..., Any] = getattr(memory, method)
        if isinstance(memory, AsyncMemoryAPI):
            return await bound(*args, **kwargs)
        return await asyncio.to_thread(bound, *args, **kwargs)


def call_sync(memory: AnyMemory, actor: str, method: str, /, *args: Any, **kwargs: Any) -> Any:
    """``memory.<method>(*args, **kwargs)`` from sync code, writes attributed to ``actor``. An
    async client belongs to its event loop, which sync code cannot drive: ClientUsageError."""
    if isinstance(memory, AsyncMemoryAPI):
        raise ClientUsageError(
            f"{type(memory).__name__} cannot serve a sync interface: pass Memory or RemoteMemory"
        )
    with acting_as(actor):
        return getattr(memory, method)(*args, **kwargs)
