"""The graphmem error tree.

Every error graphmem raises derives from :class:`GraphmemError`. Errors from the Neo4j driver,
pydantic and the operating system are mapped to this tree in one place each, with the original
kept as ``__cause__``.
"""

from __future__ import annotations


class GraphmemError(Exception):
    """Base class of every error graphmem raises."""


class ConfigurationError(GraphmemError):
    """A setting is missing, malformed or inconsistent with another one."""


class Neo4jServerError(GraphmemError):
    """The local or Docker Neo4j server could not be built, started, stopped or inspected."""

    def __init__(self, message: str, *, log_tail: str | None = None) -> None:
        if log_tail:
            message = f"{message}\n--- last lines of the server log ---\n{log_tail.rstrip()}"
        super().__init__(message)
        self.log_tail = log_tail


class Neo4jUnavailableError(GraphmemError):
    """No Neo4j answers at the configured address, or it refused the credentials."""


class CommitUnknownError(Neo4jUnavailableError):
    """The connection was lost while a write was committing: Neo4j may or may not have applied
    it. Check (``get``, ``stats``, a recall) before writing it again, or it may be stored twice."""


class DatabaseError(GraphmemError):
    """Neo4j rejected a query or a transaction failed."""


class TransientDatabaseError(DatabaseError):
    """A transient failure (a deadlock, a lock wait timed out) that outlasted the driver's own
    retries; nothing was written, and the same call may be tried again."""


class TransactionTimeoutError(DatabaseError):
    """Neo4j stopped the transaction at the time limit set by ``GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT``
    (while it ran or while it waited for a lock); it was rolled back, so nothing was written."""


class SchemaError(GraphmemError):
    """The graph's schema is missing, outdated, or does not fit this graphmem."""


class EmbedderMismatchError(SchemaError):
    """The configured embedder differs from the one the graph was built with."""

    def __init__(
        self,
        *,
        graph_model: str,
        graph_dimension: int,
        embedder_model: str,
        embedder_dimension: int,
        hint: str = "",
    ) -> None:
        what = "dimension" if graph_dimension != embedder_dimension else "model"
        super().__init__(
            f"embedder {what} mismatch: the graph was built with {graph_model!r} "
            f"({graph_dimension}-d vectors), but the configured embedder is "
            f"{embedder_model!r} ({embedder_dimension}-d vectors). Vectors from different "
            "models cannot be compared: set GRAPHMEM_EMBEDDING_MODEL to the model the graph "
            "was built with, or move the graph to the new model with `graphmem reembed`."
            + (f" {hint}" if hint else "")
        )
        self.graph_model = graph_model
        self.graph_dimension = graph_dimension
        self.embedder_model = embedder_model
        self.embedder_dimension = embedder_dimension


class ImportEmbedderMismatchError(EmbedderMismatchError):
    """A namespace export was made on a graph whose embedder (model or dimension) differs from
    the target graph's: its vectors could not be compared with the target's. Nothing was
    written."""

    def __init__(
        self,
        *,
        graph_model: str,
        graph_dimension: int,
        export_model: str,
        export_dimension: int,
    ) -> None:
        GraphmemError.__init__(
            self,
            f"the export's vectors come from {export_model!r} ({export_dimension}-d), but this "
            f"graph's embedder is {graph_model!r} ({graph_dimension}-d): they could not be "
            "compared, so nothing was imported. Import into a graph built with the export's "
            f"model (a database of its own with GRAPHMEM_EMBEDDING_MODEL={export_model}), or "
            "move the source graph to this graph's model first (`graphmem reembed` there) and "
            "export again.",
        )
        self.graph_model = graph_model
        self.graph_dimension = graph_dimension
        self.embedder_model = export_model
        self.embedder_dimension = export_dimension


class EmbeddingError(GraphmemError):
    """The embedding model could not be loaded, or produced unusable vectors."""


class ExtractionError(GraphmemError):
    """The configured extractor failed (its own error is the ``__cause__``). ``ingest`` runs it
    before writing, so nothing was written and the same messages can be sent again."""


class LLMError(GraphmemError):
    """The configured LLM could not give a usable answer. ``provider`` names it (for example
    ``openai`` or ``openai-compatible``); the message says what to do. Nothing was written."""

    def __init__(self, message: str, *, provider: str) -> None:
        super().__init__(message)
        self.provider = provider


class LLMConfigurationError(LLMError, ConfigurationError):
    """The LLM settings are incomplete: no ``GRAPHMEM_LLM``, no API key, an unknown provider,
    or a provider whose client library is not installed."""


class LLMUnavailableError(LLMError):
    """The LLM server could not be reached, timed out, or kept failing (5xx, rate limits)
    through the bounded retries."""


class LLMRefusedError(LLMError):
    """The LLM server refused the request: the key or the model was rejected, the request was
    malformed for it, or the model declined to answer."""


class LLMResponseError(LLMError):
    """The model's answers were not the JSON asked for, through every retry."""


class ConsolidationBusyError(GraphmemError):
    """Another consolidation of the namespace holds its lock; ``run_id`` is that run's id and
    ``expires_at`` when its lock lapses if it never finishes."""

    def __init__(self, message: str, *, run_id: str | None, expires_at: object = None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.expires_at = expires_at


class UndoRefusedError(GraphmemError):
    """A consolidation run cannot be undone: it is already undone or still running, or a later
    write built on what it changed (``blockers`` names each reason). An unknown run id is a
    :class:`NotFoundError`."""

    def __init__(self, message: str, *, blockers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.blockers = blockers


class QueryNotFoundError(GraphmemError):
    """No named Cypher query exists under that name."""


class OptionalDependencyError(GraphmemError):
    """An optional extra (for example ``graphmem[llm]``) is needed but not installed."""


class ClientUsageError(GraphmemError, RuntimeError):
    """A client was used where it cannot work, such as an ``AsyncMemory`` called from an event
    loop other than the one it connected in, or given a part that breaks its contract (a token
    counter whose ``count`` fails or returns something other than a non-negative int)."""


class InvalidInputError(GraphmemError, ValueError):
    """An argument is malformed: empty or oversized text, a naive datetime, a bad namespace,
    an unusable vector, a malformed message. Nothing was written."""


class CypherFileError(InvalidInputError):
    """A ``.cypher`` file whose header is missing, malformed or inconsistent with its body."""


class DuplicateKeyError(InvalidInputError):
    """A JSON object names one key twice; which value was meant cannot be told."""


class NotFoundError(InvalidInputError, LookupError):
    """No fact or episode with that id exists in the namespace."""

    def __init__(self, message: str, *, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ids = ids


class RetiredFactError(InvalidInputError):
    """The operation needs a believed (active) fact, but the fact is already retired."""

    def __init__(self, message: str, *, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ids = ids


class ForgottenError(InvalidInputError):
    """The fact or episode was erased by ``forget``; only its content-free tombstone remains."""

    def __init__(self, message: str, *, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ids = ids


class ForgottenContentError(ForgottenError):
    """A text to store is one the namespace forgot (the same normalised text as a tombstone's).
    Nothing was written. ``indexes`` are the refused inputs' positions in the call, ``ids``
    the tombstones' erased ids; ``allow_forgotten=True`` stores it anyway, flagged for
    review."""

    def __init__(
        self, message: str, *, indexes: tuple[int, ...] = (), ids: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, ids=ids)
        self.indexes = indexes


class MessageConflictError(InvalidInputError):
    """A message reuses the external id of another message of its session (stored, or earlier
    in the same call) with a different content, role, speaker or time. Stored messages are
    never changed; an edit needs an external id of its own. ``index`` is the refused message's
    position in the input, with its ``external_id`` and ``session_id``; ``other_index`` the
    earlier input it conflicts with, or ``ids`` the stored episode. ``conflicts`` holds every
    message refused by the same check, this one first, so that a caller can drop them all
    before sending the rest again."""

    def __init__(
        self,
        message: str,
        *,
        ids: tuple[str, ...] = (),
        index: int | None = None,
        other_index: int | None = None,
        external_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.ids = ids
        self.index = index
        self.other_index = other_index
        self.external_id = external_id
        self.session_id = session_id
        self.conflicts: tuple[MessageConflictError, ...] = (self,)


class IdempotencyConflictError(InvalidInputError):
    """A write reuses the idempotency key (the request id) of an earlier write with another
    body or route; nothing was written. A new write needs a key of its own."""


class ConfirmationRequiredError(InvalidInputError):
    """A call that removes data for good was made without ``confirm=True`` (dropping a
    namespace); nothing was removed."""


class NamespaceNotEmptyError(InvalidInputError):
    """An import was refused because the target namespace holds something (``counts``: what,
    by label). Nothing was written; drop the namespace first or import into another one."""

    def __init__(self, message: str, *, ns: str, counts: dict[str, int]) -> None:
        super().__init__(message)
        self.ns = ns
        self.counts = counts


class ExportFormatError(InvalidInputError):
    """Records given to an import are not a whole namespace export that this graphmem reads:
    no header or another format or version, a malformed or out-of-order record, a relationship
    to a node the export does not hold, or an end that is missing or does not match what came
    before (a file cut short). ``line`` is the 1-based record where it was found, when known.
    Nothing became visible."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message if line is None else f"record {line}: {message}")
        self.line = line


class QueryMemoryError(InvalidInputError):
    """A query (the caller's on the guarded read path, or a transaction of graphmem's own)
    needed more memory than one transaction may use (``db.memory.transaction.max``) or than
    Neo4j's heap holds; Neo4j stopped it and rolled it back, nothing changed, and asking
    again will not help."""


class QueryRefusedError(InvalidInputError):
    """The guarded read path refused a query before running it: its plan writes, or uses
    ``LOAD CSV``, an administration command or a procedure outside the allow-list.
    ``refused`` names what was refused (``"LOAD CSV"``, ``"procedure db.clearQueryCaches"``)."""

    def __init__(self, message: str, *, refused: str) -> None:
        super().__init__(message)
        self.refused = refused


class ResultTooLargeError(InvalidInputError):
    """A guarded read returned more rows than its row limit allows; nothing is returned."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class RequestTooLargeError(InvalidInputError):
    """A call to ``graphmem serve`` (REST or MCP) carries more than one call may: more items,
    more bytes of text or a larger body than ``limit`` (HTTP 413). Nothing was written."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class BadLinesError(InvalidInputError):
    """Some lines of a JSONL input are malformed; each problem names its line number."""

    def __init__(self, problems: list[tuple[int, str]], *, none_good: bool = False) -> None:
        shown = "; ".join(f"line {n}: {why}" for n, why in problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        if none_good:  # skipping bad lines left nothing to write
            head = f"no line could be written, all {len(problems)} are bad"
        else:
            head = f"{len(problems)} malformed line(s)"
        super().__init__(f"{head}: {shown}{more}")
        self.problems = problems


class AuthenticationError(GraphmemError):
    """A request to ``graphmem serve`` carried no API key, or one that is unknown, revoked or
    expired (HTTP 401). Nothing was read or written."""


class PermissionDeniedError(GraphmemError):
    """An API key asked for a namespace outside its scope, or for an operation its role does
    not allow (HTTP 403). Nothing was read or written."""


class ServiceError(GraphmemError):
    """``graphmem serve`` could not be reached, or answered in a way the remote client cannot
    read (``status``: the HTTP status, when there was an answer)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
