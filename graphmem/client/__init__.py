"""The Python client: :class:`Memory` (sync) and :class:`AsyncMemory` (async).

One client, two transports. The methods are written once, in :mod:`~graphmem.client.api_aio`
(the sync :mod:`~graphmem.client.api_sync` is generated from it), and each hands one operation
of the table (:mod:`graphmem.ops.table`) to a transport: here the local one, which carries out
the plans the core returns (embedding, extraction and Neo4j transactions) in
:mod:`~graphmem.client.sync` and :mod:`~graphmem.client.aio`; or the HTTP one of
:class:`~graphmem.remote.RemoteMemory`, which sends it to ``graphmem serve``. Three lines for
an agent::

    with Memory(ns="user-42") as memory:
        memory.remember("The user works at Microsoft.")
        print(memory.context("where does the user work?", budget_tokens=300).text)

The clients load on first use, so that the HTTP client imports neither the driver nor the
embedder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphmem.client.aio import AsyncMemory
    from graphmem.client.sync import Memory


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from graphmem.client.sync import Memory

        return Memory
    if name == "AsyncMemory":
        from graphmem.client.aio import AsyncMemory

        return AsyncMemory
    raise AttributeError(f"module 'graphmem.client' has no attribute {name!r}")


__all__ = ["AsyncMemory", "Memory"]
