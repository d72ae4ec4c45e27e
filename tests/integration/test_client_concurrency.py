"""The clients under concurrent calls, cancellation and closing, against the real Neo4j."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import neo4j
import numpy as np
import pytest

from graphmem.client import AsyncMemory, Memory
from graphmem.client import graph as graph_module
from graphmem.client.graph import Graph
from graphmem.core.writes import fact_rows
from graphmem.embed.embedder import Embedder, Vectors, check_vectors
from graphmem.models import Fact, FactInput, RecallResult
from graphmem.settings import GraphmemSettings
from graphmem.store.cypher import query


class _AxisEmbedder:
    """Embeds the query "alpha" as the first axis and "omega" as the second, under the model id
    of the graph's embedder, so that the two queries rank facts on a quarter circle between
    the axes in opposite vector orders."""

    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id, self.dimension = model_id, dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            row[0 if text == "alpha" else 1] = 1.0
        return check_vectors(rows, self.dimension)


def test_concurrent_recalls_ranking_the_same_facts_differently_do_not_deadlock(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    ns: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Each recall stamps the facts it found in one write. "alpha" and "omega" rank the same
    # facts in different orders; stamped in rank order, two such recalls would lock the
    # same facts in opposite orders, and Neo4j would break the deadlock by failing one of them
    # (retried by the driver after a pause, or failed once the retries run out).
    axes = _AxisEmbedder(embedder.model_id, embedder.dimension)
    client = AsyncMemory(test_settings, target=graph.target, embedder=axes, ns=ns)
    count = 12
    angles = np.linspace(0.05, np.pi / 2 - 0.05, count)
    vectors = np.zeros((count, embedder.dimension), dtype=np.float32)
    vectors[:, 0], vectors[:, 1] = np.cos(angles), np.sin(angles)

    async def scenario() -> list[list[str]]:
        async with client:
            await client.remember_many(
                [f"alpha omega item {i}" for i in range(count)], vectors=vectors
            )
            with caplog.at_level(logging.WARNING, logger="neo4j"):
                results = await asyncio.gather(
                    *(
                        client.recall(("alpha", "omega")[i % 2], k=count, kinds=["fact"])
                        for i in range(24)
                    )
                )
            return [[hit.id for hit in result.hits] for result in results]

    rankings = asyncio.run(scenario())
    assert len(rankings[0]) == count and sorted(rankings[0]) == sorted(rankings[1])
    assert rankings[0] != rankings[1]  # the same facts, in different orders
    deadlocks = [r for r in caplog.records if "DeadlockDetected" in r.getMessage()]
    assert deadlocks == []


class _GatedModelId:
    """The test embedder, but once ``armed``, reading its model id (which the schema work does,
    in its worker thread) signals ``entered`` and waits for ``release``."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.dimension = inner, inner.dimension
        self.armed, self.entered, self.release = False, threading.Event(), threading.Event()

    @property
    def model_id(self) -> str:
        if self.armed:
            self.entered.set()
            assert self.release.wait(60)
        return self.inner.model_id

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed(texts)


def test_a_first_call_cancelled_while_connecting_leaves_no_connection_open(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    ns: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The schema work of the first call runs in a worker thread, which the cancellation does
    # not stop: the driver it opened must still be closed when it ends.
    opened: list[neo4j.Driver] = []
    real_open = getattr(graph_module, "open_driver")  # noqa: B009 (not re-exported)

    def recording(*args: Any, **kwargs: Any) -> neo4j.Driver:
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(graph_module, "open_driver", recording)
    gated = _GatedModelId(embedder)
    client = AsyncMemory(test_settings, target=graph.target, embedder=gated, ns=ns)
    gated.armed = True

    async def cancelled_while_connecting() -> None:
        call = asyncio.create_task(client.stats())
        assert await asyncio.to_thread(gated.entered.wait, 60)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        gated.armed = False
        gated.release.set()

    asyncio.run(cancelled_while_connecting())  # waits for the worker thread to end
    assert len(opened) == 1 and opened[0]._closed
    assert client._graph is None

    async def later() -> int:
        async with client:
            return (await client.stats()).facts

    assert asyncio.run(later()) == 0  # the client connects on its next call
    assert len(opened) == 2 and opened[1]._closed


class _GatedEmbedder:
    """The test embedder, but a text starting with "wait" blocks until ``release`` is set."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.started, self.release = inner, threading.Event(), threading.Event()
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        if texts and texts[0].startswith("wait"):
            self.started.set()
            assert self.release.wait(60)
        return self.inner.embed(texts)


def test_a_close_interrupted_while_waiting_for_calls_leaves_the_client_usable(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    # close() waits for the calls in flight; Ctrl-C (KeyboardInterrupt) during that wait must
    # not leave the client closing for ever, with every later call waiting for it.
    gated = _GatedEmbedder(embedder)
    client = Memory(test_settings, target=graph.target, embedder=gated, ns=ns).connect()
    written: list[Fact] = []
    writer = threading.Thread(target=lambda: written.append(client.remember("wait for me")))
    writer.start()
    assert gated.started.wait(60)  # the write is in flight
    state = client._state
    real_wait_for = state.wait_for

    def interrupted_wait_for(predicate: Callable[[], bool], timeout: float | None = None) -> Any:
        if threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt  # as a signal would, while close() waits
        return real_wait_for(predicate, timeout)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(state, "wait_for", interrupted_wait_for)
            with pytest.raises(KeyboardInterrupt):
                client.close()
    finally:
        gated.release.set()
    writer.join(60)
    assert [fact.text for fact in written] == ["wait for me"]
    counted: list[int] = []
    later = threading.Thread(target=lambda: counted.append(client.stats().facts), daemon=True)
    later.start()
    later.join(60)
    assert counted == [1], "a call after the interrupted close() waited for it for ever"
    client.close()
    assert client._graph is None


def _blocked_on_a_lock(graph: Graph, statement: str) -> bool:
    """Whether a transaction running ``statement`` (a fragment of it) waits for a lock."""
    records, _, _ = graph.driver.execute_query(
        "SHOW TRANSACTIONS YIELD currentQuery, status "
        "WHERE currentQuery CONTAINS $statement AND status STARTS WITH 'Blocked' "
        "RETURN count(*) AS n",
        statement=statement,
        database_=graph.database,
    )
    return bool(records[0]["n"])


def test_a_recall_stamping_a_fact_that_a_write_links_to_is_not_deadlocked(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    ns: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A write holds the lock of a fact it references; a recall that found the fact waits for
    # that lock to stamp it. When the write then links its new fact to that fact, the two
    # must go on one after the other, not be failed by Neo4j as deadlocked.
    client = Memory(test_settings, target=graph.target, embedder=embedder, ns=ns).connect()
    target = client.remember("The office is in Porto.")
    new = FactInput(text="The office has a view of the river.", references=(target.id,))
    rows = fact_rows(ns, [new], embedder.embed([new.text]), None)
    recalled: list[RecallResult] = []
    with caplog.at_level(logging.WARNING, logger="neo4j"):
        with graph.driver.session(database=graph.database) as session:
            tx = session.begin_transaction()
            tx.run(query("fact_lock").text, ns=ns, ids=[target.id]).consume()
            recall = threading.Thread(
                target=lambda: recalled.append(client.recall("office", kinds=["fact"]))
            )
            recall.start()
            deadline = time.monotonic() + 60
            while not _blocked_on_a_lock(graph, "access_count"):
                assert time.monotonic() < deadline, "the recall never waited for the lock"
                time.sleep(0.05)
            tx.run(query("fact_create").text, facts=rows, actor="api").consume()
            tx.commit()
        recall.join(60)
    assert [hit.id for hit in recalled[0].hits] == [target.id]
    assert client.get(target.id).access_count == 1
    deadlocks = [r for r in caplog.records if "DeadlockDetected" in r.getMessage()]
    assert deadlocks == []
    client.close()


def test_closing_an_async_client_waits_for_a_connect_under_way(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    # close() while connect() opens the connection: close waits for it and then closes it,
    # rather than return at once and leave the connection opened after it behind (with the
    # client then refusing every call as tied to "another event loop").
    gated = _GatedModelId(embedder)
    client = AsyncMemory(test_settings, target=graph.target, embedder=gated, ns=ns)
    gated.armed = True

    async def scenario() -> int:
        connecting = asyncio.create_task(client.connect())
        assert await asyncio.to_thread(gated.entered.wait, 60)  # the schema work is under way
        closing = asyncio.create_task(client.close())
        await asyncio.sleep(0)  # close() runs until it waits (or, closing nothing, returns)
        gated.armed = False
        gated.release.set()
        await asyncio.gather(connecting, closing)
        assert client._graph is None  # closed after the connect, not before it
        try:
            return (await client.stats()).facts  # and usable again in this loop
        finally:
            await client.close()  # in the loop its driver belongs to

    assert asyncio.run(scenario()) == 0


def test_closing_a_client_waits_for_a_connect_under_way(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    gated = _GatedModelId(embedder)
    client = Memory(test_settings, target=graph.target, embedder=gated, ns=ns)
    gated.armed = True
    connecting = threading.Thread(target=client.connect)
    connecting.start()
    assert gated.entered.wait(60)  # the schema work is under way
    closing = threading.Thread(target=client.close)
    closing.start()
    # close() either returns (closing nothing) or waits for the connect, seen as a call.
    deadline = time.monotonic() + 60
    while closing.is_alive() and not (client._closing and client._callers):
        assert time.monotonic() < deadline, "close() neither returned nor waited"
        time.sleep(0.01)
    gated.armed = False
    gated.release.set()
    connecting.join(60)
    closing.join(60)
    assert client._graph is None  # closed after the connect, not before it
    client.close()
