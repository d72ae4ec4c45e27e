"""Re-embedding: moving a graph to another embedding model, explicitly.

A graph records the model its vectors came from, and a client with another model is refused
(:class:`~graphmem.errors.EmbedderMismatchError`), since vectors of different models cannot be
compared. :func:`reembed` moves the whole database to the configured model:

1. it marks the graph as being re-embedded, so that every client connecting meanwhile is
   refused (its vectors are mixed until the end);
2. drops the two vector indexes;
3. embeds every fact's text and every episode's content again, namespace by namespace, a batch
   per transaction, recording in the same transaction how far it got, so that a run that
   stops (Ctrl-C, a crash, a lost connection) resumes there when started again;
4. embeds again what was recorded after it started (by clients that were connected before),
5. rebuilds the vector indexes for the new dimension and records the new model.

Nothing else changes: no fact or episode is created, retired or deleted, and no time stamp
moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

import neo4j
from pydantic import BaseModel

from graphmem import db, schema
from graphmem.core import VectorParam
from graphmem.cypher import query
from graphmem.embeddings import Embedder, check_vectors
from graphmem.errors import InvalidInputError, SchemaError
from graphmem.models import native_time

_LABELS: tuple[Literal["Fact", "Episode"], ...] = ("Fact", "Episode")
_READ = {"Fact": "reembed_facts", "Episode": "reembed_episodes"}
_WRITE = {"Fact": "reembed_write_facts", "Episode": "reembed_write_episodes"}
MAX_BATCH = 10_000


class ReembedPlan(BaseModel):
    """What a re-embedding would do: the model the graph has and the one it would get, and
    what it would embed again."""

    from_model: str | None
    from_dimension: int | None
    to_model: str
    to_dimension: int
    namespaces: int
    facts: int
    episodes: int
    #: A re-embedding to ``to_model`` that stopped before the end: this one resumes it.
    resumes: bool
    #: The graph already has ``to_model``'s vectors: there is nothing to do.
    up_to_date: bool


class ReembedReport(BaseModel):
    """What a re-embedding did."""

    plan: ReembedPlan
    facts: int
    episodes: int
    #: Items recorded after the run began (by clients connected before it), embedded again.
    caught_up: int
    seconds: float


def reembed_plan(driver: neo4j.Driver, *, database: str, embedder: Embedder) -> ReembedPlan:
    """What :func:`reembed` would do with ``embedder``; writes nothing. Raises
    :class:`~graphmem.errors.SchemaError` when the graph cannot be re-embedded to it: no
    schema yet, or a re-embedding to another model under way."""
    schema.check_dimension(embedder)
    state = schema.read_state(driver, database)
    if state is None or state["embedder_model"] is None:
        raise SchemaError(
            "the graph has no recorded embedder, so there is nothing to re-embed: run "
            "`graphmem init` (with the model you want) instead"
        )
    if schema.schema_version(driver, database) < schema.LATEST_VERSION:
        raise SchemaError("the graph's schema is not up to date: run `graphmem init` first")
    target = (embedder.model_id, embedder.dimension)
    under_way = state["reembedding_model"]
    if under_way is not None and (under_way, state["reembedding_dimension"]) != target:
        raise SchemaError(
            f"a re-embedding to {under_way!r} ({state['reembedding_dimension']}-d) started at "
            f"{state['reembedding_started_at']} and has not finished: finish it with that model "
            "(set GRAPHMEM_EMBEDDING_MODEL to it and run `graphmem reembed`) before another"
        )
    rows = db.execute(driver, database, query("reembed_namespaces"))
    return ReembedPlan(
        from_model=state["embedder_model"],
        from_dimension=state["embedding_dimension"],
        to_model=embedder.model_id,
        to_dimension=embedder.dimension,
        namespaces=len(rows),
        facts=sum(int(r["facts"]) for r in rows),
        episodes=sum(int(r["episodes"]) for r in rows),
        resumes=under_way is not None,
        up_to_date=under_way is None
        and (state["embedder_model"], state["embedding_dimension"]) == target,
    )


def reembed(
    driver: neo4j.Driver,
    *,
    database: str,
    embedder: Embedder,
    batch_size: int = 256,
    progress: Callable[[int], object] | None = None,
    timeout: float = 300.0,
) -> ReembedReport:
    """Re-embed every fact and episode of the database with ``embedder`` and record it as the
    graph's model (see the module's description). Stop the clients that write first: those
    connected before the run are not refused, and what they write after it ends keeps the old
    model's vectors. ``progress`` is called with the number of items each batch embedded."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise InvalidInputError(f"batch_size must be an integer, got {batch_size!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise InvalidInputError(f"batch_size must be from 1 to {MAX_BATCH}, got {batch_size}")
    began = time.monotonic()
    plan = reembed_plan(driver, database=database, embedder=embedder)
    if plan.up_to_date:
        return ReembedReport(plan=plan, facts=0, episodes=0, caught_up=0, seconds=0.0)

    def mark(name: str) -> list[neo4j.Record]:
        """Run the schema-node query ``name`` for the new model."""
        return db.execute(
            driver,
            database,
            query(name),
            key=schema.SCHEMA_KEY,
            model=embedder.model_id,
            dimension=embedder.dimension,
        )

    (claimed,) = mark("reembed_claim")
    if (claimed["reembedding_model"], claimed["reembedding_dimension"]) != (
        embedder.model_id,
        embedder.dimension,
    ):  # another run claimed the graph for another model between the plan and the claim
        raise SchemaError(
            f"a re-embedding to {claimed['reembedding_model']!r} began meanwhile: finish it first"
        )
    started = native_time(claimed["started_at"])
    schema.drop_vector_indexes(driver, database=database)
    cursor: Sequence[Any] | None = claimed["cursor"]
    counts = {"Fact": 0, "Episode": 0}
    caught_up = 0
    namespaces = [r["ns"] for r in db.execute(driver, database, query("reembed_namespaces"))]
    # Pass 0 embeds everything; pass 1 what was recorded since the run began.
    for pass_no, since in ((0, None), (1, started)):
        for label_no, label in enumerate(_LABELS):
            for ns in namespaces:
                position = (pass_no, label_no, ns)
                after: str | None = None
                if cursor is not None:
                    done = (int(cursor[0]), _LABELS.index(cursor[1]), cursor[2])
                    if position < done:
                        continue
                    if position == done:
                        after = cursor[3]
                while True:
                    written = _batch(
                        driver, database, embedder, label, ns, after, since, batch_size, position
                    )
                    if written is None:
                        break
                    after, count = written
                    if pass_no == 0:
                        counts[label] += count
                    else:
                        caught_up += count
                    if progress is not None:
                        progress(count)
    schema.create_vector_indexes(driver, database=database, dimension=embedder.dimension)
    if not mark(
        "reembed_finish"
    ):  # pragma: no cover - only another run could have changed the claim
        raise SchemaError("the re-embedding's claim changed while it ran: run it again")
    schema.await_indexes_online(driver, database=database, timeout=timeout)
    return ReembedReport(
        plan=plan,
        facts=counts["Fact"],
        episodes=counts["Episode"],
        caught_up=caught_up,
        seconds=time.monotonic() - began,
    )


def _batch(
    driver: neo4j.Driver,
    database: str,
    embedder: Embedder,
    label: Literal["Fact", "Episode"],
    ns: str,
    after: str | None,
    since: datetime | None,
    limit: int,
    position: tuple[int, int, str],
) -> tuple[str, int] | None:
    """Embeds and writes the next batch of ``label`` in ``ns`` after ``after``, recording the
    cursor in the same transaction; the last id written and the count, or None when done."""
    rows = db.execute(
        driver, database, query(_READ[label]), ns=ns, after=after, since=since, limit=limit
    )
    if not rows:
        return None
    vectors = check_vectors(embedder.embed([r["text"] for r in rows]), embedder.dimension)
    items = [
        {"id": r["id"], "embedding": VectorParam(v.tolist())}
        for r, v in zip(rows, vectors, strict=True)
    ]
    last = items[-1]["id"]
    cursor = [str(position[0]), label, ns, last]  # a Neo4j list holds one type

    def write(tx: neo4j.ManagedTransaction) -> None:
        for q, params in (
            (query(_WRITE[label]), {"ns": ns, "rows": items}),
            (query("reembed_cursor"), {"key": schema.SCHEMA_KEY, "cursor": cursor}),
        ):
            q.check_params(params)
            tx.run(q.text, params).consume()

    with (
        db.driver_errors(),
        driver.session(
            database=database, bookmark_manager=driver.execute_query_bookmark_manager
        ) as session,
    ):
        session.execute_write(write)
    return last, len(items)
