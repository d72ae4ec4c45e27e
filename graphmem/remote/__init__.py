"""The remote clients: :class:`RemoteMemory` (sync) and :class:`AsyncRemoteMemory` (async),
with the methods, arguments and results of :class:`~graphmem.client.Memory` and
:class:`~graphmem.client.AsyncMemory`, answered by a ``graphmem serve`` over HTTP.

As httpx is built over httpcore, the pure part is shared: :mod:`~graphmem.remote.call`,
:mod:`~graphmem.remote.calls` and :mod:`~graphmem.remote.calls_admin` turn each method's
arguments into a request and its answer into the library's result model or error
(:mod:`graphmem.models.wire`); :mod:`~graphmem.remote.sync` and :mod:`~graphmem.remote.aio`
only send them. They import neither the Neo4j driver nor the embedder."""

from graphmem.remote.aio import AsyncRemoteMemory
from graphmem.remote.sync import RemoteMemory

__all__ = ["AsyncRemoteMemory", "RemoteMemory"]
