"""The Python clients: :class:`Memory` (sync) and :class:`AsyncMemory` (async).

Both have the same methods with the same arguments and results; all logic lives in
:mod:`graphmem.core`, and each client only carries out the plans it returns (embedding,
extraction and Neo4j transactions): :mod:`~graphmem.client.sync` and
:mod:`~graphmem.client.aio` drive them, :mod:`~graphmem.client.base` holds what the two share,
and :mod:`~graphmem.client.graph` opens the graph. Three lines for an agent::

    with Memory(ns="user-42") as memory:
        memory.remember("The user works at Microsoft.")
        print(memory.context("where does the user work?", budget_tokens=300).text)
"""

from graphmem.client.aio import AsyncMemory
from graphmem.client.sync import Memory

__all__ = ["AsyncMemory", "Memory"]
