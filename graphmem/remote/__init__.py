"""The client over HTTP: :class:`RemoteMemory` (sync) and :class:`AsyncRemoteMemory` (async)
are :class:`~graphmem.client.Memory`'s and :class:`~graphmem.client.AsyncMemory`'s methods
(:mod:`graphmem.client.api_sync`, :mod:`graphmem.client.api_aio`: the same code) over the HTTP
transport, answered by a ``graphmem serve``.

For example::

    async with AsyncRemoteMemory("https://memory.example.com", key, ns="user-42") as memory:
        await memory.remember("The user works at Microsoft.")

:mod:`~graphmem.remote.wire` builds each operation's request from the table of operations and
reads its answer into the library's result model or error (:mod:`graphmem.models.wire`);
:mod:`~graphmem.remote.http_aio` sends it (:mod:`~graphmem.remote.http_sync` is generated from
it). They import neither the Neo4j driver nor the embedder."""

from __future__ import annotations

from graphmem.client.api_aio import AsyncMemoryAPI
from graphmem.client.api_sync import MemoryAPI
from graphmem.remote.http_aio import AsyncHttpTransport
from graphmem.remote.http_sync import HttpTransport


class RemoteMemory(HttpTransport, MemoryAPI):
    """The client of a ``graphmem serve``: :class:`~graphmem.client.Memory`'s methods,
    arguments and results over HTTP. ``url`` and ``key`` default to ``GRAPHMEM_SERVER_URL``
    and ``GRAPHMEM_API_KEY``; every method takes ``ns``, which defaults to the client's ``ns``
    (``GRAPHMEM_NAMESPACE``). The server embeds, extracts and consolidates with its own
    models, and attributes every change to the key's name. Close it, or use it as a context
    manager; a server that cannot be reached is a :class:`~graphmem.errors.ServiceError`."""


class AsyncRemoteMemory(AsyncHttpTransport, AsyncMemoryAPI):
    """The async client of a ``graphmem serve``: :class:`~graphmem.client.AsyncMemory`'s
    methods, awaited; otherwise as :class:`RemoteMemory`."""


__all__ = ["AsyncRemoteMemory", "RemoteMemory"]
