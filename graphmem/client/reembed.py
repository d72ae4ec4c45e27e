"""Re-embedding: moving a graph to another embedding model, explicitly.

A graph records the model its vectors came from, and a client with another model is refused
(:class:`~graphmem.errors.EmbedderMismatchError`), since vectors of different models cannot be
compared. :func:`reembed` moves the whole database to the configured model:

1. it marks the graph as being re-embedded, so that every client is refused meanwhile (its
   vectors are mixed until the end): those that connect, and, since each write and each
   recall checks the recorded model in its own transaction, those already connected;
2. drops the two vector indexes;
3. embeds every fact's text and every episode's content again, namespace by namespace, a batch
   per transaction, recording in the same transaction how far it got, so that a run that
   stops resumes there when started again;
4. embeds again what was recorded after it started (by writers that do not check the model),
   until a pass finds nothing;
5. rebuilds the vector indexes for the new dimension and records the new model.

One run at a time holds the re-embedding (a token on the schema node, and a heartbeat the run
renews while it is alive); a run that is gone is taken over. Nothing else changes: no fact or
episode is created, retired or deleted, and no time stamp moves.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

import neo4j
from pydantic import BaseModel

from graphmem.core.checks import checked_integer
from graphmem.core.messages import episode_text
from graphmem.core.plans import VectorParam
from graphmem.embed.embedder import Embedder, check_vectors
from graphmem.errors import GraphmemError, SchemaError
from graphmem.models import native_time
from graphmem.store import db, schema
from graphmem.store.cypher import query

_LABELS: tuple[Literal["Fact", "Episode"], ...] = ("Fact", "Episode")
_READ = {"Fact": "reembed_facts", "Episode": "reembed_episodes"}
_READ_SINCE = {"Fact": "reembed_facts_since", "Episode": "reembed_episodes_since"}
_WRITE = {"Fact": "reembed_write_facts", "Episode": "reembed_write_episodes"}
MAX_BATCH = 10_000
#: A run that has written no batch for this long (killed, or its connection lost) may be taken
#: over by another run to the same model.
LEASE_SECONDS = 120
#: Passes over what was written meanwhile before a run gives up on writers that do not stop.
MAX_CATCH_UP = 10


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
    #: The model of an unfinished re-embedding to another model, which this one replaces
    #: (starting again from the beginning) once its run is gone.
    replaces: str | None = None
    #: The graph already has ``to_model``'s vectors, and vector indexes for them: there is
    #: nothing to do. (Indexes built for another dimension are rebuilt by a run.)
    up_to_date: bool
    #: When the run holding the unfinished re-embedding last showed it was alive, if within
    #: the lease: another run is then refused until it ends.
    running_since_heartbeat: datetime | None = None


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
    :class:`~graphmem.errors.SchemaError` when the graph has no schema to re-embed, or one
    that a newer graphmem has migrated (even to the same model: it is not this one's to judge)."""
    schema.check_dimension(embedder)
    schema.refuse_newer_migrations(driver, database)
    state = schema.read_state(driver, database)
    if state is None or state["embedder_model"] is None:
        raise SchemaError(
            "the graph has no recorded embedder, so there is nothing to re-embed: run "
            "`graphmem init` (with the model you want) instead"
        )
    target = (embedder.model_id, embedder.dimension)
    under_way = state["reembedding_model"]
    same = under_way is not None and (under_way, state["reembedding_dimension"]) == target
    (found,) = db.execute(driver, database, query("reembed_namespaces"))
    rows = found["namespaces"]
    heartbeat = state["reembedding_heartbeat"]
    alive = (
        under_way is not None
        and heartbeat is not None
        and (native_time(found["now"]) - native_time(heartbeat)).total_seconds() < LEASE_SECONDS
    )
    return ReembedPlan(
        from_model=state["embedder_model"],
        from_dimension=state["embedding_dimension"],
        to_model=embedder.model_id,
        to_dimension=embedder.dimension,
        namespaces=len(rows),
        facts=sum(int(r["facts"]) for r in rows),
        episodes=sum(int(r["episodes"]) for r in rows),
        resumes=same,
        replaces=under_way if under_way is not None and not same else None,
        up_to_date=under_way is None
        and (state["embedder_model"], state["embedding_dimension"]) == target
        and all(
            built == embedder.dimension
            for built in schema.vector_index_dimensions(driver, database).values()
        ),
        running_since_heartbeat=native_time(heartbeat) if alive else None,
    )


def refuse_if_running(plan: ReembedPlan) -> None:
    """Raise :class:`~graphmem.errors.SchemaError` if another run, alive, holds the
    re-embedding that ``plan`` would resume or replace."""
    if plan.running_since_heartbeat is not None:
        raise _busy(plan.replaces or plan.to_model, plan.running_since_heartbeat)


def _busy(model: str | None, heartbeat: Any) -> SchemaError:
    return SchemaError(
        f"another run is re-embedding the graph to {model!r} (it last showed it was alive at "
        f"{heartbeat}); let it finish. If it was stopped without ending (killed, or its "
        f"connection lost), run again once it has shown nothing for {LEASE_SECONDS} s"
    )


def reembed(
    driver: neo4j.Driver,
    *,
    database: str,
    embedder: Embedder,
    batch_size: int = 256,
    progress: Callable[[int], object] | None = None,
    timeout: float = 300.0,
    checkpoint: Callable[[], object] | None = None,
    again: bool = False,
) -> ReembedReport:
    """Re-embed every fact and episode of the database with ``embedder`` and record it as the
    graph's model (see the module's description). ``progress`` is called with the number of
    items each batch embedded. ``checkpoint`` is called between transactions, after each batch
    and before each pass; whatever it raises ends the run, which then gives its claim up (the
    CLI stops there on SIGTERM, SIGHUP and Ctrl-C). A second run to the same model while this
    one is alive is refused; one that starts after this one stopped resumes where it was.
    A graph already on ``embedder``'s model is left as it is, unless ``again``: then every
    item is embedded again with the same model, as when the text an item is embedded from
    changed (episodes stored before they were embedded with their speaker)."""
    batch_size = checked_integer("batch_size", batch_size, 1, MAX_BATCH)
    began = time.monotonic()
    plan = reembed_plan(driver, database=database, embedder=embedder)
    if plan.up_to_date and not again:
        return ReembedReport(plan=plan, facts=0, episodes=0, caught_up=0, seconds=0.0)
    refuse_if_running(plan)
    # Migrations an older graphmem did not apply: clients and `graphmem init` refuse a graph
    # whose re-embedding is unfinished, so this run must bring the schema up to date itself.
    schema.apply_migrations(driver, database=database, timeout=timeout)
    token = str(uuid.uuid4())

    def mark(name: str, **params: Any) -> list[neo4j.Record]:
        """Run the schema-node query ``name`` for this run and the new model."""
        return db.execute(
            driver, database, query(name), key=schema.SCHEMA_KEY, token=token, **params
        )

    target = {"model": embedder.model_id, "dimension": embedder.dimension}
    (claimed,) = mark("reembed_claim", lease=LEASE_SECONDS, **target)
    if claimed["token"] != token:
        raise _busy(claimed["reembedding_model"], claimed["heartbeat"])
    finished = False
    try:
        with _Lease(lambda: bool(mark("reembed_heartbeat")[0]["held"])) as lease:
            schema.drop_vector_indexes(driver, database=database)
            counts, caught_up = _embed_all(
                driver, database, embedder, batch_size, (progress, checkpoint), claimed, token
            )
            # The indexes are built for this run's dimension only while it holds the claim.
            lease.check()
            schema.create_vector_indexes(driver, database=database, dimension=embedder.dimension)
            if not mark("reembed_finish", **target):
                raise _taken_over()
        finished = True
    finally:
        if not finished:  # give the claim up, so that the next run resumes at once
            # At best: the lease covers a release that fails, and what ended the run is the
            # error to report, not one from a driver it may have interrupted.
            with contextlib.suppress(Exception):
                mark("reembed_release")
    schema.await_indexes_online(driver, database=database, timeout=timeout)
    return ReembedReport(
        plan=plan,
        facts=counts["Fact"],
        episodes=counts["Episode"],
        caught_up=caught_up,
        seconds=time.monotonic() - began,
    )


def _taken_over() -> SchemaError:
    return SchemaError(
        "another run took the re-embedding over (this one showed no sign of life for "
        f"{LEASE_SECONDS} s: stalled, or its connection lost); it goes on from here"
    )


class _Lease:
    """Renews the run's claim every quarter of the lease from a thread of its own while the
    run is alive, so that a slow step (a large batch, an index drop that waits for open
    writes, a catch-up read) never looks like a run that is gone. ``renew`` records a sign of
    life and says whether the run still holds the claim."""

    def __init__(self, renew: Callable[[], bool]) -> None:
        self._renew = renew
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="reembed-lease", daemon=True)

    def __enter__(self) -> _Lease:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(LEASE_SECONDS / 4):
            try:
                if not self._renew():
                    return
            except GraphmemError:  # the server is unreachable: the next batch will say so
                continue

    def check(self) -> None:
        """Raise unless the run still holds the claim (and record a sign of life)."""
        if not self._renew():
            raise _taken_over()


def _embed_all(
    driver: neo4j.Driver,
    database: str,
    embedder: Embedder,
    batch_size: int,
    calls: tuple[Callable[[int], object] | None, Callable[[], object] | None],
    claimed: neo4j.Record,
    token: str,
) -> tuple[dict[str, int], int]:
    """Embeds every fact and episode again, after the claim's cursor; then, again until
    none is left, what was recorded since the previous pass began (by clients connected
    before the claim, or by older graphmem versions, which do not check the graph's embedder
    when they write). Returns the counts of the first pass by label and the count of the
    later ones."""
    cursor: Sequence[Any] | None = claimed["cursor"]
    if cursor is not None and int(cursor[0]) > 0:
        # Stopped while catching up: catch up again from the claim on (pass 0 is done).
        cursor = ["1", _LABELS[0], "", ""]
    counts = {"Fact": 0, "Episode": 0}
    caught_up = 0
    since: datetime | None = None
    pass_no = 0
    progress, checkpoint = calls
    while True:
        if checkpoint is not None:
            checkpoint()
        (state,) = db.execute(driver, database, query("reembed_namespaces"))
        next_since = native_time(state["now"])  # the next pass looks from here on
        found = 0
        for label_no, label in enumerate(_LABELS):
            for ns in (n["ns"] for n in state["namespaces"]):
                position = (pass_no, label_no, ns)
                after = ""  # before every id
                if cursor is not None:
                    done = (int(cursor[0]), _LABELS.index(cursor[1]), cursor[2])
                    if position < done:
                        continue
                    if position == done:
                        after = cursor[3]
                while True:
                    written = _batch(
                        driver,
                        database,
                        embedder,
                        (label, ns, after, since, batch_size),
                        (position, token),
                    )
                    if written is None:
                        break
                    after, count = written
                    found += count
                    if pass_no == 0:
                        counts[label] += count
                    else:
                        caught_up += count
                    if progress is not None:
                        progress(count)
                    if checkpoint is not None:
                        checkpoint()
        if pass_no > 0 and found == 0:
            return counts, caught_up
        if pass_no >= MAX_CATCH_UP:
            raise SchemaError(
                f"facts or episodes were still being written after {MAX_CATCH_UP} passes to "
                "catch up: stop the clients that write (older graphmem versions do not check "
                "the graph's model), then run `graphmem reembed` again to finish"
            )
        # The first pass looks again from the claim on (a resumed run may have lost track of
        # what was written before it started), later ones from the start of the pass before.
        since = native_time(claimed["started_at"]) if pass_no == 0 else next_since
        pass_no += 1


def _batch(
    driver: neo4j.Driver,
    database: str,
    embedder: Embedder,
    what: tuple[Literal["Fact", "Episode"], str, str, datetime | None, int],
    run: tuple[tuple[int, int, str], str],
) -> tuple[str, int] | None:
    """Embeds and writes the next batch (``what``: label, namespace, the last id done, the
    earliest recording time, the batch size), recording the run's cursor (``run``: position
    and token) in the same transaction; the last id written and the count, or None when
    done."""
    label, ns, after, since, limit = what
    position, token = run
    if since is None:
        rows = db.execute(driver, database, query(_READ[label]), ns=ns, after=after, limit=limit)
    else:
        read = query(_READ_SINCE[label])
        rows = db.execute(driver, database, read, ns=ns, since=since, after=after, limit=limit)
    if not rows:
        return None
    # An episode is embedded as ingest embeds it: with its speaker (facts have none).
    texts = [episode_text(r["text"], r.get("speaker")) for r in rows]
    vectors = check_vectors(embedder.embed(texts), embedder.dimension)
    items = [
        {"id": r["id"], "embedding": VectorParam(v.tolist())}
        for r, v in zip(rows, vectors, strict=True)
    ]
    last = items[-1]["id"]
    cursor = [str(position[0]), label, ns, last]  # a Neo4j list holds one type

    def statement(tx: neo4j.ManagedTransaction, name: str, params: dict[str, Any]) -> list[Any]:
        q = query(name)
        q.check_params(params)
        return tx.run(q.text, params).data()

    def write(tx: neo4j.ManagedTransaction) -> None:
        statement(tx, _WRITE[label], {"ns": ns, "rows": items})
        if not statement(
            tx, "reembed_cursor", {"key": schema.SCHEMA_KEY, "token": token, "cursor": cursor}
        ):
            raise _taken_over()

    with (
        db.driver_errors(),
        driver.session(
            database=database, bookmark_manager=driver.execute_query_bookmark_manager
        ) as session,
    ):
        session.execute_write(write)
    return last, len(items)
