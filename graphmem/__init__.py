"""graphmem: memory for AI agents on Neo4j.

Facts are nodes; updates, conflicts and cross-references are typed relationships that carry
their times, so nothing an agent was told is silently lost.
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any

from graphmem.errors import (
    BadLinesError,
    ClientUsageError,
    ConfigurationError,
    DatabaseError,
    EmbedderMismatchError,
    EmbeddingError,
    ForgottenError,
    GraphmemError,
    InvalidInputError,
    Neo4jServerError,
    Neo4jUnavailableError,
    NotFoundError,
    RetiredFactError,
    SchemaError,
)
from graphmem.settings import GraphmemSettings, load_settings

if TYPE_CHECKING:
    from graphmem.memory import AsyncMemory, Memory


def __getattr__(name: str) -> Any:
    """``graphmem.Memory`` and ``graphmem.AsyncMemory``, imported on first use."""
    if name in ("Memory", "AsyncMemory"):
        from graphmem import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'graphmem' has no attribute {name!r}")


__all__ = [
    "AsyncMemory",
    "BadLinesError",
    "ClientUsageError",
    "ConfigurationError",
    "DatabaseError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "ForgottenError",
    "GraphmemError",
    "GraphmemSettings",
    "InvalidInputError",
    "Memory",
    "Neo4jServerError",
    "Neo4jUnavailableError",
    "NotFoundError",
    "RetiredFactError",
    "SchemaError",
    "__version__",
    "load_settings",
]
