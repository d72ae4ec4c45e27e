"""graphmem: memory for AI agents on Neo4j.

Facts are nodes; updates, conflicts and cross-references are typed relationships that carry
their times, so nothing an agent was told is silently lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem._version import __version__
from graphmem.errors import (
    BadLinesError,
    ClientUsageError,
    CommitUnknownError,
    ConfigurationError,
    ConsolidationBusyError,
    DatabaseError,
    EmbedderMismatchError,
    EmbeddingError,
    ExportFormatError,
    ExtractionError,
    ForgottenContentError,
    ForgottenError,
    GraphmemError,
    InvalidInputError,
    LLMError,
    MessageConflictError,
    NamespaceNotEmptyError,
    Neo4jServerError,
    Neo4jUnavailableError,
    NotFoundError,
    QueryMemoryError,
    QueryRefusedError,
    ResultTooLargeError,
    RetiredFactError,
    SchemaError,
    TransactionTimeoutError,
    TransientDatabaseError,
    UndoRefusedError,
)
from graphmem.settings import GraphmemSettings, load_settings

if TYPE_CHECKING:
    from graphmem.client import AsyncMemory, Memory
    from graphmem.core.consolidate.heuristic import HeuristicProposer
    from graphmem.core.extraction import ExtractedFact, Extractor
    from graphmem.core.recall.ranking import RecallConfig
    from graphmem.models import (
        ContextBlock,
        Episode,
        Fact,
        FactHistory,
        FactInput,
        Hit,
        IngestResult,
        Message,
        NamespaceStats,
        RecallResult,
    )
    from graphmem.models.audit import Beliefs, Diff, Explanation, Timeline
    from graphmem.models.consolidation import ConsolidationResult
    from graphmem.models.erasure import ForgetResult, ForgetVerification, ReviewFlag
    from graphmem.models.namespaces import DropResult, ImportResult, NamespaceSummary
    from graphmem.remote import AsyncRemoteMemory, RemoteMemory

# The clients, what they take and what they return, imported on first use (the clients pull in
# the driver and, through the embedder, PyTorch; the remote clients httpx).
_LAZY = {
    "Memory": "graphmem.client",
    "AsyncMemory": "graphmem.client",
    "RemoteMemory": "graphmem.remote",
    "AsyncRemoteMemory": "graphmem.remote",
    "RecallConfig": "graphmem.core.recall.ranking",
    "ExtractedFact": "graphmem.core.extraction",
    "Extractor": "graphmem.core.extraction",
    "HeuristicProposer": "graphmem.core.consolidate.heuristic",
    "ConsolidationResult": "graphmem.models.consolidation",
    **dict.fromkeys(
        ("ForgetResult", "ForgetVerification", "ReviewFlag"), "graphmem.models.erasure"
    ),
    **dict.fromkeys(("Beliefs", "Diff", "Explanation", "Timeline"), "graphmem.models.audit"),
    **dict.fromkeys(
        ("DropResult", "ImportResult", "NamespaceSummary"), "graphmem.models.namespaces"
    ),
    **dict.fromkeys(
        (
            "ContextBlock",
            "Episode",
            "Fact",
            "FactHistory",
            "FactInput",
            "Hit",
            "IngestResult",
            "Message",
            "NamespaceStats",
            "RecallResult",
        ),
        "graphmem.models",
    ),
}


def __getattr__(name: str) -> Any:
    """The names of ``_LAZY`` (``graphmem.Memory``, ``graphmem.RecallConfig``, ...)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'graphmem' has no attribute {name!r}")


__all__ = [
    "AsyncMemory",
    "AsyncRemoteMemory",
    "BadLinesError",
    "Beliefs",
    "ClientUsageError",
    "CommitUnknownError",
    "ConfigurationError",
    "ConsolidationBusyError",
    "ConsolidationResult",
    "ContextBlock",
    "DatabaseError",
    "Diff",
    "DropResult",
    "EmbedderMismatchError",
    "EmbeddingError",
    "Episode",
    "Explanation",
    "ExportFormatError",
    "ExtractedFact",
    "ExtractionError",
    "Extractor",
    "Fact",
    "FactHistory",
    "FactInput",
    "ForgetResult",
    "ForgetVerification",
    "ForgottenContentError",
    "ForgottenError",
    "GraphmemError",
    "GraphmemSettings",
    "HeuristicProposer",
    "Hit",
    "ImportResult",
    "IngestResult",
    "InvalidInputError",
    "LLMError",
    "Memory",
    "Message",
    "MessageConflictError",
    "NamespaceNotEmptyError",
    "NamespaceStats",
    "NamespaceSummary",
    "Neo4jServerError",
    "Neo4jUnavailableError",
    "NotFoundError",
    "QueryMemoryError",
    "QueryRefusedError",
    "RecallConfig",
    "RecallResult",
    "RemoteMemory",
    "ResultTooLargeError",
    "RetiredFactError",
    "ReviewFlag",
    "SchemaError",
    "Timeline",
    "TransactionTimeoutError",
    "TransientDatabaseError",
    "UndoRefusedError",
    "__version__",
    "load_settings",
]
