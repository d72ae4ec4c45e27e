"""Running named queries: reads routed as reads, and driver errors mapped in one place."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

import neo4j
from neo4j.exceptions import (
    AuthError,
    ClientError,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ResultFailedError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graphmem.errors import (
    CommitUnknownError,
    DatabaseError,
    GraphmemError,
    InvalidInputError,
    Neo4jUnavailableError,
    QueryMemoryError,
    SchemaError,
    TransactionTimeoutError,
    TransientDatabaseError,
)
from graphmem.store.cypher import CypherQuery

#: Codes of a transaction that Neo4j stopped at its time limit.
_TIMED_OUT = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    }
)
#: Codes of a transaction that was stopped while it ran or waited for a lock: the time limit,
#: an operator's ``TERMINATE TRANSACTION`` or a shutdown (Neo4j does not say which).
_TERMINATED = frozenset(
    {
        "Neo.ClientError.Transaction.Terminated",
        "Neo.ClientError.Transaction.LockClientStopped",
    }
)

#: Codes of bookmarks a transaction was asked to wait for: that Neo4j did not reach in time,
#: and that are not bookmarks of this database.
_BOOKMARK_TIMEOUT = "Neo.TransientError.Transaction.BookmarkTimeout"
_BAD_BOOKMARK = frozenset(
    {
        "Neo.ClientError.Transaction.InvalidBookmark",
        "Neo.ClientError.Transaction.InvalidBookmarkMixture",
    }
)


#: Neo4j's codes for a query that ran out of memory: over ``db.memory.transaction.max``, or
#: over the heap itself (a server that does not exit on OutOfMemoryError reports it so).
_MEMORY_CODES = frozenset(
    {
        "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
        "Neo.TransientError.General.OutOfMemoryError",
        "Neo.TransientError.General.TransactionMemoryLimit",
    }
)


class _OutOfMemory(Exception):
    """Raised inside a transaction function (:func:`no_retry_on_memory`) so that the driver
    does not retry a query that ran out of memory (it would only run out again); the
    :func:`driver_errors` around the transaction turns it into a :class:`QueryMemoryError`."""

    def __init__(self, cause: Neo4jError) -> None:
        super().__init__(cause.message)
        self.cause = cause


@contextmanager
def no_retry_on_memory() -> Iterator[None]:
    """Inside a transaction function: a query that ran out of memory ends the transaction
    without the driver's retries."""
    try:
        yield
    except TransientError as exc:
        if exc.code in _MEMORY_CODES:
            raise _OutOfMemory(exc) from exc
        raise


def _memory_error(cause: Neo4jError) -> QueryMemoryError:
    heap = cause.code == "Neo.TransientError.General.OutOfMemoryError"
    what = "than the server's heap holds" if heap else "than one transaction may use"
    return QueryMemoryError(
        f"the query needed more memory {what} on this server "
        f"({cause.code}: {cause.message}); Neo4j stopped it and nothing changed. Narrow it "
        "(fewer rows, smaller lists and strings; for a write, smaller batches) or raise the "
        "limit (db.memory.transaction.max; GRAPHMEM_LOCAL_NEO4J_TRANSACTION_MEMORY on the "
        "local server)"
    )


def map_driver_error(
    exc: Neo4jError | DriverError, *, timeout_passed: float | None = None
) -> GraphmemError:
    """The graphmem error for a Neo4j driver error; ``timeout_passed``, when the caller's
    transaction time limit (in seconds) had run out, makes a stopped transaction a timeout."""
    code = exc.code if isinstance(exc, Neo4jError) else None
    if code in _TIMED_OUT or (timeout_passed is not None and code in _TERMINATED):
        limit = f" of {timeout_passed:g} s" if timeout_passed is not None else ""
        return TransactionTimeoutError(
            f"Neo4j stopped the transaction at its time limit{limit} and rolled it back, so "
            f"nothing was written ({code})"
        )
    if code in _MEMORY_CODES and isinstance(exc, Neo4jError):
        return _memory_error(exc)
    if code == _BOOKMARK_TIMEOUT or code in _BAD_BOOKMARK:
        return _bookmark_error(exc)
    if isinstance(exc, AuthError):
        return Neo4jUnavailableError(f"Neo4j refused the credentials: {exc}")
    if isinstance(exc, IncompleteCommit):
        return CommitUnknownError(
            f"the connection to Neo4j was lost while the write was committing, so it may or may "
            f"not have been applied; check before writing it again ({exc})"
        )
    if isinstance(exc, ServiceUnavailable | SessionExpired):
        return Neo4jUnavailableError(f"Neo4j became unavailable: {exc}")
    if isinstance(exc, TransientError):
        return TransientDatabaseError(
            f"{exc.code}: {exc.message} (a transient failure that outlasted the retries; "
            "nothing was written, and the call may be tried again)"
        )
    if isinstance(exc, Neo4jError) and "no such vector schema index" in (exc.message or ""):
        return SchemaError(
            f"a vector index graphmem searches is missing ({exc.message}): the graph is being "
            "re-embedded (`graphmem reembed` with the new model finishes it), or its indexes "
            "were dropped (`graphmem init` restores them)"
        )
    if isinstance(exc, Neo4jError):
        return DatabaseError(f"{exc.code}: {exc.message}")
    return DatabaseError(str(exc))


def _bookmark_error(exc: Neo4jError | DriverError) -> GraphmemError:
    """The error of a transaction that could not wait for the bookmarks it was given (a
    request's ``Graphmem-Bookmark``): it never began, so nothing was written."""
    said = getattr(exc, "message", None) or exc
    if getattr(exc, "code", None) == _BOOKMARK_TIMEOUT:
        return TransactionTimeoutError(
            "the database did not catch up with the bookmark this request asked to follow "
            "(Graphmem-Bookmark) within the server's wait (db.transaction.bookmark_ready_timeout)"
            f", so nothing was read or written: try again later ({said})"
        )
    return InvalidInputError(
        f"the bookmark this request asked to follow (Graphmem-Bookmark) is not one of this "
        f"database's; nothing was read or written ({said})"
    )


@contextmanager
def driver_errors(timeout: float | None = None) -> Iterator[None]:
    """Map driver errors raised in the block to graphmem's error tree; ``timeout`` is the
    transaction time limit the block's transactions run under, if any."""
    started = time.monotonic()
    try:
        yield
    except _OutOfMemory as exc:
        raise _memory_error(exc.cause) from exc.cause
    except (Neo4jError, DriverError) as exc:
        passed = timeout if timeout and time.monotonic() - started >= timeout else None
        raise map_driver_error(exc, timeout_passed=passed) from exc


@contextmanager
def passing_over(codes: Collection[str]) -> Iterator[None]:
    """Neo4j client errors of these codes, raised in the block, end it without an error:
    what failed is already so (an index another process has just created, say). The driver
    may report one as the failure of its result, from the rollback of the transaction that
    met it: that one is passed over too."""
    try:
        yield
    except (ClientError, ResultFailedError) as exc:
        cause = exc if isinstance(exc, ClientError) else exc.__cause__
        if not isinstance(cause, ClientError) or cause.code not in codes:
            raise


def execute(
    driver: neo4j.Driver, database: str, query: CypherQuery, /, **params: Any
) -> list[neo4j.Record]:
    """Run one named query in its own transaction, routed by the query's mode."""
    query.check_params(params)
    routing = neo4j.RoutingControl.READ if query.mode == "read" else neo4j.RoutingControl.WRITE
    with driver_errors():
        records, _, _ = driver.execute_query(
            query.text, params, database_=database, routing_=routing
        )
    return list(records)
