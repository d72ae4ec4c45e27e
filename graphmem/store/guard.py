"""The guarded read path: how graphmem runs a Cypher query it did not write itself.

The analyst library in ``cypher/``, :meth:`graphmem.client.graph.Graph.read` and every later
way in for someone else's Cypher (the command line, the MCP server) go through here. A query is
planned first (``EXPLAIN``, which runs nothing), and runs only if its plan passes
:func:`check_plan`:

* Neo4j classifies it as a read (query type ``r``; ``s``, which Neo4j gives schema writes and
  DBMS procedures alike, only for a plan that calls ``dbms.components``);
* every operator of the plan is one of :data:`READ_OPERATORS`, the operators that only read
  the graph and work on rows, so that ``LOAD CSV``, ``SHOW``/``TERMINATE TRANSACTIONS``, user
  and index administration, ``FOREACH`` and ``CALL {}`` with writes, and any operator a later
  Neo4j adds are refused until they are known to read only;
* every procedure it calls is one of :data:`ALLOWED_PROCEDURES`;
* every operator runs on the database it was sent to.

This is an allow-list, not a list of forbidden words: what is not known to be a read is
refused, and the refusal (:class:`~graphmem.errors.QueryRefusedError`) names what it refused.
A query that passes runs in a read transaction (which the server itself keeps from writing)
with a time limit, and returns at most a row limit of rows.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import neo4j
from neo4j.exceptions import ClientError

from graphmem.errors import (
    DatabaseError,
    InvalidInputError,
    QueryRefusedError,
    TransactionTimeoutError,
)
from graphmem.store.cypher import query
from graphmem.store.db import driver_errors, no_retry_on_memory
from graphmem.store.guard_secrets import Secrets, check_secrets, redact, refuse_tombstone_hashes

#: Plan operators that only read the graph or work on rows (their names in Neo4j 5.26 and the
#: 2025 releases; a parenthesised variant such as ``Expand(Into)`` counts as its base name).
READ_OPERATORS: frozenset[str] = frozenset(
    {
        # leaves: scans and seeks
        "AllNodesScan", "NodeByLabelScan", "NodeByIdSeek", "NodeByElementIdSeek",
        "NodeIndexSeek", "NodeUniqueIndexSeek", "NodeIndexSeekByRange",
        "NodeUniqueIndexSeekByRange", "NodeIndexScan", "NodeIndexContainsScan",
        "NodeIndexEndsWithScan", "MultiNodeIndexSeek", "AssertingMultiNodeIndexSeek",
        "UnionNodeByLabelsScan", "IntersectionNodeByLabelsScan", "SubtractionNodeByLabelsScan",
        "DirectedRelationshipByIdSeek", "UndirectedRelationshipByIdSeek",
        "DirectedRelationshipByElementIdSeek", "UndirectedRelationshipByElementIdSeek",
        "DirectedAllRelationshipsScan", "UndirectedAllRelationshipsScan",
        "DirectedRelationshipTypeScan", "UndirectedRelationshipTypeScan",
        "DirectedUnionRelationshipTypesScan", "UndirectedUnionRelationshipTypesScan",
        "DirectedRelationshipIndexSeek", "UndirectedRelationshipIndexSeek",
        "DirectedRelationshipIndexSeekByRange", "UndirectedRelationshipIndexSeekByRange",
        "DirectedRelationshipIndexScan", "UndirectedRelationshipIndexScan",
        "DirectedRelationshipIndexContainsScan", "UndirectedRelationshipIndexContainsScan",
        "DirectedRelationshipIndexEndsWithScan", "UndirectedRelationshipIndexEndsWithScan",
        "DirectedRelationshipUniqueIndexSeek", "UndirectedRelationshipUniqueIndexSeek",
        "DirectedRelationshipUniqueIndexSeekByRange",
        "UndirectedRelationshipUniqueIndexSeekByRange",
        "NodeCountFromCountStore", "RelationshipCountFromCountStore", "Argument",
        "ArgumentTracker", "EmptyRow",
        # traversal
        "Expand", "OptionalExpand", "VarLengthExpand", "ShortestPath", "StatefulShortestPath",
        "Repeat", "Trail", "BidirectionalRepeatTrail", "NullifyMetadata", "ProjectEndpoints",
        "TriadicSelection", "TriadicBuild", "TriadicFilter",
        # nested loops and joins
        "Apply", "SemiApply", "AntiSemiApply", "LetSemiApply", "LetAntiSemiApply",
        "SelectOrSemiApply", "SelectOrAntiSemiApply", "LetSelectOrSemiApply",
        "LetSelectOrAntiSemiApply", "RollUpApply", "ConditionalApply", "AntiConditionalApply",
        "Optional", "Anti", "CartesianProduct", "NodeHashJoin", "ValueHashJoin",
        "NodeLeftOuterHashJoin", "NodeRightOuterHashJoin",
        # rows
        "Filter", "Limit", "Skip", "Sort", "PartialSort", "Top", "PartialTop",
        "Projection", "Distinct", "OrderedDistinct", "EagerAggregation", "OrderedAggregation",
        "Unwind", "Union", "OrderedUnion", "Eager", "CacheProperties", "ProduceResults",
        # checked one by one against ALLOWED_PROCEDURES
        "ProcedureCall",
    }
)  # fmt: skip

#: Procedures a guarded read may call: the index queries graphmem itself uses and the
#: read-only ``db.*`` procedures that describe the graph, plus ``dbms.components``.
ALLOWED_PROCEDURES: frozenset[str] = frozenset(
    {
        "db.index.fulltext.queryNodes", "db.index.fulltext.queryRelationships",
        "db.index.vector.queryNodes", "db.index.vector.queryRelationships",
        "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.info", "db.ping",
        "db.schema.visualization", "db.schema.nodeTypeProperties", "db.schema.relTypeProperties",
        "dbms.components",
    }
)  # fmt: skip

#: The allowed procedures Neo4j runs as DBMS procedures (a plan calling one has query type
#: ``s``, the type of schema writes too).
_DBMS_PROCEDURES = frozenset({"dbms.components"})

#: What a refusal calls the operators a user may have meant on purpose.
_NAMED = {
    "LoadCSV": "LOAD CSV (it reads files and URLs)",
    "AdministrationCommand": "an administration command",
    "Foreach": "FOREACH (it only runs updating clauses)",
    "SubqueryForeach": "a CALL {} subquery that returns nothing (an updating subquery)",
    "TransactionForeach": "CALL {} IN TRANSACTIONS",
    "TransactionApply": "CALL {} IN TRANSACTIONS",
}
_PROCEDURE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\(")
_OPTION = re.compile(r"^\s*(EXPLAIN|PROFILE)\b", re.IGNORECASE)


@dataclass(frozen=True)
class GuardedRows:
    """What a guarded read returned: its columns, at most ``limit`` records, and whether the
    query had more (``truncated``)."""

    columns: tuple[str, ...]
    records: list[neo4j.Record]
    truncated: bool
    limit: int

    def __iter__(self) -> Iterator[neo4j.Record]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def data(self) -> list[dict[str, Any]]:
        """The records as dicts (nodes and relationships as their properties)."""
        return [record.data() for record in self.records]


def _refuse(what: str, why: str) -> QueryRefusedError:
    return QueryRefusedError(
        f"refused {what}: {why}; the guarded read path runs only read-only queries (see "
        "'The guarded read path' in the docs)",
        refused=what,
    )


def _words(operator: str) -> str:
    """``ShowTransactions`` as ``SHOW TRANSACTIONS``."""
    return " ".join(re.findall(r"[A-Z][a-z]*", operator)).upper()


def check_plan(plan: Mapping[str, Any] | None, query_type: str | None, database: str) -> None:
    """Raise :class:`~graphmem.errors.QueryRefusedError` unless the ``EXPLAIN`` plan of a
    query (its summary's ``plan`` and ``query_type``) only reads ``database``."""
    if plan is None:
        raise _refuse("the query", "Neo4j returned no plan for it")
    nodes = list(_operators(plan))
    # Procedures first, so that a refusal names the procedure rather than an operator around
    # it (a procedure that returns nothing sits under an EmptyResult).
    procedures = {_procedure(node) for node in nodes if _base(node) == "ProcedureCall"}
    for procedure in sorted(procedures - ALLOWED_PROCEDURES):
        raise _refuse(
            f"procedure {procedure}",
            "it is not on the allow-list (" + ", ".join(sorted(ALLOWED_PROCEDURES)) + ")",
        )
    # The operator that does the work rather than the EmptyResult above an updating plan.
    outside = [node for node in nodes if _base(node) not in READ_OPERATORS]
    outside.sort(key=lambda node: _base(node) == "EmptyResult")
    for node in outside[:1]:
        name, base = str(node.get("operatorType", "")).partition("@")[0], _base(node)
        if base.startswith(("Show", "Terminate")):
            raise _refuse(f"the admin command {_words(base)}", "it is not a read of the graph")
        what = _NAMED.get(base) or f"the plan operator {name}"
        raise _refuse(what, "it is not on the list of read-only operators")
    for node in nodes:
        name, _, on = str(node.get("operatorType", "")).partition("@")
        if on and on != database:
            what = f"the plan operator {name} on database {on!r}"
            raise _refuse(what, f"only {database!r} is read")
    if query_type in ("w", "rw"):
        raise _refuse("a write", "its plan writes to the graph")
    if query_type == "s" and procedures & _DBMS_PROCEDURES:
        return
    if query_type != "r":
        raise _refuse("the query", f"Neo4j classifies it as {query_type!r}, not as a read")


def _base(node: Mapping[str, Any]) -> str:
    """An operator's name without its database and its variant: ``Expand(All)@neo4j`` is
    ``Expand``."""
    return str(node.get("operatorType", "")).partition("@")[0].split("(", 1)[0]


def _procedure(node: Mapping[str, Any]) -> str:
    details = str((node.get("args") or {}).get("Details", ""))
    found = _PROCEDURE.match(details)
    return found.group(1) if found else details or "an unnamed procedure"


def _operators(plan: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield plan
    for child in plan.get("children") or ():
        yield from _operators(child)


def _check_text(text: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError("the query is empty")
    option = _OPTION.match(text)
    if option:
        raise _refuse(
            option.group(1).upper(), "give the query itself; the guarded path plans it first"
        )


@contextmanager
def _read_errors(timeout: float) -> Iterator[None]:
    """Driver errors mapped as everywhere (:func:`driver_errors`), and a statement Neo4j
    refuses (a syntax error, a missing parameter, an unknown procedure or function) or a
    procedure call that fails on its arguments (a malformed fulltext query) as the caller's
    input error."""
    try:
        with driver_errors(timeout):
            yield
    except DatabaseError as exc:
        cause = exc.__cause__
        if isinstance(cause, ClientError) and (cause.code or "").startswith(
            (
                "Neo.ClientError.Statement.",
                "Neo.ClientError.Procedure.ProcedureCallFailed",
                "Neo.ClientError.Procedure.ProcedureNotFound",
            )
        ):
            raise InvalidInputError(f"Neo4j refused the query: {cause.message}") from cause
        raise


def guarded_read(
    driver: neo4j.Driver,
    database: str,
    text: str,
    params: Mapping[str, Any] | None = None,
    *,
    timeout: float,
    limit: int,
    bookmark_manager: neo4j.api.BookmarkManager | None = None,
) -> GuardedRows:
    """Plan ``text``, check the plan, and run it in a read transaction of at most ``timeout``
    seconds, keeping at most ``limit`` rows (after the writes ``bookmark_manager`` knows)."""
    _check_text(text)
    params = dict(params or {})

    def run() -> GuardedRows:
        with (
            _read_errors(timeout),
            driver.session(
                database=database,
                default_access_mode=neo4j.READ_ACCESS,
                bookmark_manager=bookmark_manager,
            ) as session,
        ):
            query = neo4j.Query(f"EXPLAIN {text}", timeout=timeout)
            summary = session.run(query, params).consume()
            check_plan(summary.plan, summary.query_type, database)
            check_secrets(summary.plan, params)
            work = neo4j.unit_of_work(timeout=timeout)(_fetch)
            return session.execute_read(work, text, params, limit, clock)

    # In a thread of its own, so that the caller gets its answer by the deadline even when
    # Neo4j cannot stop the query there: it stops between rows, but one expression (a reduce
    # over a long range) runs to its end first. The thread finishes with the server.
    clock = _Clock()
    outcome: list[GuardedRows | BaseException] = []
    worker = threading.Thread(
        target=lambda: outcome.append(_outcome(run)), name="graphmem-guarded-read", daemon=True
    )
    worker.start()
    while not outcome:
        left = clock.left(timeout)
        if left <= 0:
            raise _past_deadline(timeout)
        worker.join(left)
    (result,) = outcome
    if isinstance(result, BaseException):
        raise result
    return result


#: Seconds past a guarded read's time limit at which its caller stops waiting: Neo4j finds a
#: transaction past its limit within 0.1 s on the local server (2 s on its defaults) and
#: stops it at its next row.
DEADLINE_MARGIN = 1.5


class _Clock:
    """When the read's current step began: the plan check, then each attempt of the read
    transaction (the driver retries one that failed on a passing error). Each step has the
    time limit, so the caller waits for the one under way, not for their sum."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def restart(self) -> None:
        self.started = time.monotonic()

    def left(self, timeout: float) -> float:
        """Seconds until the caller stops waiting for the step under way."""
        return self.started + timeout + DEADLINE_MARGIN - time.monotonic()


def _outcome(run: Callable[[], GuardedRows]) -> GuardedRows | BaseException:
    try:
        return run()
    except BaseException as exc:  # handed to the caller's thread
        return exc


def _past_deadline(timeout: float) -> TransactionTimeoutError:
    return TransactionTimeoutError(
        f"the query ran past its time limit of {timeout:g} s and its answer was not waited "
        "for; Neo4j stops it when it can (one long expression, such as a reduce over a huge "
        "range, runs to its end first) and rolls it back, so nothing was written"
    )


def _fetch(
    tx: neo4j.ManagedTransaction, text: str, params: dict[str, Any], limit: int, clock: _Clock
) -> GuardedRows:
    clock.restart()
    with no_retry_on_memory():
        result = tx.run(text, params)
        records: list[neo4j.Record] = []
        truncated = False
        for record in result:
            if len(records) == limit:
                truncated = True
                break
            records.append(record)
        columns = tuple(result.keys())
        result.consume()  # rows past the limit are dropped, not buffered
        _hide_secrets(tx, records)
        return GuardedRows(columns, records, truncated, limit)


def _hide_secrets(tx: neo4j.ManagedTransaction, records: list[neo4j.Record]) -> None:
    """Redact the secrets of a guarded read's records, or refuse them (see
    :mod:`graphmem.store.guard_secrets`), with the secret values read in the same
    transaction."""
    secrets = Secrets.of(tx.run(query("guard_secrets").text).data())
    hexes = redact(records, secrets)
    if hexes:
        found = tx.run(query("guard_tombstone_hashes").text, {"hashes": hexes}).single()
        refuse_tombstone_hashes(bool(found and found["found"]))


async def guarded_read_async(
    driver: neo4j.AsyncDriver,
    database: str,
    text: str,
    params: Mapping[str, Any] | None = None,
    *,
    timeout: float,
    limit: int,
    bookmark_manager: neo4j.api.AsyncBookmarkManager | None = None,
) -> GuardedRows:
    """:func:`guarded_read` on the async driver."""
    _check_text(text)
    params = dict(params or {})

    async def run() -> GuardedRows:
        with _read_errors(timeout):
            async with driver.session(
                database=database,
                default_access_mode=neo4j.READ_ACCESS,
                bookmark_manager=bookmark_manager,
            ) as session:
                query = neo4j.Query(f"EXPLAIN {text}", timeout=timeout)
                summary = await (await session.run(query, params)).consume()
                check_plan(summary.plan, summary.query_type, database)
                check_secrets(summary.plan, params)
                work = neo4j.unit_of_work(timeout=timeout)(_fetch_async)
                return await session.execute_read(work, text, params, limit, clock)

    clock = _Clock()
    task = asyncio.ensure_future(run())
    # An answer or error that comes after the caller stopped waiting is dropped quietly.
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        while not task.done():
            left = clock.left(timeout)
            if left <= 0:
                task.cancel()
                raise _past_deadline(timeout)
            await asyncio.wait([task], timeout=left)
    except asyncio.CancelledError:
        task.cancel()
        raise
    return task.result()


async def _fetch_async(
    tx: neo4j.AsyncManagedTransaction,
    text: str,
    params: dict[str, Any],
    limit: int,
    clock: _Clock,
) -> GuardedRows:
    clock.restart()
    with no_retry_on_memory():
        result = await tx.run(text, params)
        records: list[neo4j.Record] = []
        truncated = False
        async for record in result:
            if len(records) == limit:
                truncated = True
                break
            records.append(record)
        columns = tuple(result.keys())
        await result.consume()
        await _hide_secrets_async(tx, records)
        return GuardedRows(columns, records, truncated, limit)


async def _hide_secrets_async(
    tx: neo4j.AsyncManagedTransaction, records: list[neo4j.Record]
) -> None:
    """:func:`_hide_secrets` on the async driver."""
    secrets = Secrets.of(await (await tx.run(query("guard_secrets").text)).data())
    hexes = redact(records, secrets)
    if hexes:
        hashes = {"hashes": hexes}
        found = await (await tx.run(query("guard_tombstone_hashes").text, hashes)).single()
        refuse_tombstone_hashes(bool(found and found["found"]))
