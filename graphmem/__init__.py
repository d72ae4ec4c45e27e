"""graphmem: memory for AI agents on Neo4j.

Facts are nodes; updates, conflicts and cross-references are typed relationships that carry
their times, so nothing an agent was told is silently lost.
"""

from __future__ import annotations

__version__ = "0.1.0"

from graphmem.errors import (
    ConfigurationError,
    DatabaseError,
    EmbedderMismatchError,
    EmbeddingError,
    GraphmemError,
    Neo4jServerError,
    Neo4jUnavailableError,
    SchemaError,
)
from graphmem.settings import GraphmemSettings, load_settings

__all__ = [
    "ConfigurationError",
    "DatabaseError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "GraphmemError",
    "GraphmemSettings",
    "Neo4jServerError",
    "Neo4jUnavailableError",
    "SchemaError",
    "__version__",
    "load_settings",
]
