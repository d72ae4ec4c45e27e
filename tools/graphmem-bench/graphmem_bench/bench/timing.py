"""The timed steps ``graphmem bench`` and ``graphmem bench peer`` share: write batches that
respect supersession, progress lines, the meter of a phase's wall and CPU time, the embedding
ceiling and the timed fact writes."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from graphmem import DatabaseError
from graphmem.testing import (
    API_ACTOR,
    EmbedderWrapper,
    Progress,
    VectorParam,
    cpu_reader,
    run_query,
    text_hash,
)
from graphmem_bench.bench.report import CpuUse, Throughput
from graphmem_bench.bench.synthetic import SyntheticFact

if TYPE_CHECKING:
    from graphmem import Memory
    from graphmem.testing import Embedder, Vectors


def plan_batches(facts: Sequence[SyntheticFact], batch_size: int) -> list[list[int]]:
    """Fact indices in write batches of at most ``batch_size``, in order, except that an
    update waits for a later batch when the fact it replaces is not written yet: a batch can
    only supersede facts stored before it."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    written: set[int] = set()
    batches: list[list[int]] = []
    waiting: list[int] = []
    position = 0
    while waiting or position < len(facts):
        batch: list[int] = []
        deferred: list[int] = []
        candidates = iter(waiting)
        while len(batch) < batch_size:
            index = next(candidates, None)
            if index is None:
                if position >= len(facts):
                    break
                index = position
                position += 1
            target = facts[index].updates
            if target is None or target in written:
                batch.append(index)
            else:
                deferred.append(index)
        waiting = deferred + list(candidates)
        written.update(batch)
        batches.append(batch)
    return batches


def chunks(count: int, size: int) -> Iterator[range]:
    for start in range(0, count, size):
        yield range(start, min(start + size, count))


def fact_item(fact: SyntheticFact, ids: dict[int, str]) -> dict[str, Any]:
    """The ``remember_many`` item of a synthetic fact; an update supersedes the stored fact."""
    item: dict[str, Any] = {"text": fact.text, "tags": [fact.topic], "source": "graphmem bench"}
    if fact.updates is not None:
        item["supersedes"] = [ids[fact.updates]]
        item["reason"] = "newer information"
    return item


def ticker(say: Progress, label: str, total: int, unit: str) -> Callable[[int, float], None]:
    """Reports progress about every tenth of ``total`` (and at the end)."""
    step = max(1, total // 10)
    state = {"next": step}

    def tick(done: int, seconds: float) -> None:
        if done >= state["next"] or done >= total:
            rate = done / seconds if seconds > 0 else 0.0
            say(f"  {label}: {done:,}/{total:,} {unit}, {rate:,.0f}/s")
            while state["next"] <= done:
                state["next"] += step

    return tick


class TimedEmbedder(EmbedderWrapper):
    """An embedder that adds the seconds its calls take to ``seconds``."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Vectors:
        began = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - began


class Meter:
    """Wall time, this process's CPU time and the throwaway server's (``pid``; None: not
    known) summed over the timed calls of one phase."""

    def __init__(self, pid: int | None) -> None:
        self._server_cpu = cpu_reader(pid)
        self.seconds = 0.0
        self.client = 0.0
        self.server: float | None = None if pid is None else 0.0

    @contextmanager
    def timing(self) -> Iterator[None]:
        server = self._server_cpu()
        client = time.process_time()
        began = time.perf_counter()
        yield
        self.seconds += time.perf_counter() - began
        self.client += time.process_time() - client
        after = self._server_cpu()
        if self.server is not None and server is not None and after is not None:
            self.server += after - server
        else:
            self.server = None

    def throughput(self, items: int, batches: int) -> Throughput:
        cpu = CpuUse(client_seconds=self.client, server_seconds=self.server)
        return Throughput(items=items, seconds=self.seconds, batches=batches, cpu=cpu)


def embed_ceiling(
    embedder: Embedder,
    texts: Sequence[str],
    batch_size: int,
    say: Progress,
    *,
    pid: int | None = None,
) -> tuple[Throughput, Vectors]:
    embedder.embed(list(texts[: min(len(texts), 32)]))  # load and warm the model, untimed
    tick = ticker(say, "embedding ceiling", len(texts), "texts")
    parts = []
    meter = Meter(pid)
    batches = 0
    for chunk in chunks(len(texts), batch_size):
        batch = list(texts[chunk.start : chunk.stop])
        with meter.timing():
            parts.append(embedder.embed(batch))
        batches += 1
        tick(chunk.stop, meter.seconds)
    vectors = np.vstack(parts) if parts else np.zeros((0, embedder.dimension), np.float32)
    return meter.throughput(len(texts), batches), vectors


def write_facts(
    memory: Memory,
    ns: str,
    facts: Sequence[SyntheticFact],
    batches: Sequence[Sequence[int]],
    vectors: Vectors | None,
    label: str,
    say: Progress,
    *,
    pid: int | None = None,
) -> tuple[Throughput, dict[int, str]]:
    ids: dict[int, str] = {}
    tick = ticker(say, label, len(facts), "facts")
    meter = Meter(pid)
    for batch in batches:
        items = [fact_item(facts[i], ids) for i in batch]
        rows = None if vectors is None else vectors[np.asarray(batch, dtype=np.intp)]
        with meter.timing():
            created = memory.remember_many(items, ns=ns, vectors=rows)
        if len(created) != len(batch):
            raise DatabaseError(f"{label}: wrote {len(created)} of {len(batch)} facts")
        ids.update(zip(batch, (fact.id for fact in created), strict=True))
        tick(len(ids), meter.seconds)
    return meter.throughput(len(facts), len(batches)), ids


def bare_row(ns: str, item: Mapping[str, Any], vector: Vectors) -> dict[str, Any]:
    """The ``bench_bare_create`` row of a :func:`fact_item`: the values ``remember_many``
    stores for it (a new id, the text's hash, the vector as a list), made without validation."""
    return {
        "id": str(uuid.uuid4()),
        "ns": ns,
        "text": item["text"],
        "text_hash": text_hash(item["text"]),
        "embedding": VectorParam(vector.tolist()),
        "source": item["source"],
        "tags": item["tags"],
        "valid_from": None,
        "valid_to": None,
        "metadata": None,
        "pinned": False,
        "reason": item.get("reason"),
        "supersedes": item.get("supersedes", []),
    }


def write_bare(
    memory: Memory,
    ns: str,
    items: Sequence[Mapping[str, Any]],
    vectors: Vectors,
    label: str,
) -> list[str]:
    """Write ``items`` (:func:`fact_item` mappings) with their ``vectors`` in one transaction
    through the bare statement ``bench_bare_create``; their new ids, in order."""
    rows = [bare_row(ns, item, vector) for item, vector in zip(items, vectors, strict=True)]
    (out,) = run_query(memory, "bench_bare_create", facts=rows, actor=API_ACTOR)
    updates = sum(bool(row["supersedes"]) for row in rows)
    if out["created"] != len(rows) or out["superseded"] != updates:
        raise DatabaseError(
            f"{label}: wrote {out['created']} of {len(rows)} facts, superseded "
            f"{out['superseded']} of {updates}"
        )
    return [row["id"] for row in rows]


def write_paired(
    memory: Memory,
    namespaces: tuple[str, str],
    facts: Sequence[SyntheticFact],
    batches: Sequence[Sequence[int]],
    vectors: Vectors,
    say: Progress,
    *,
    pid: int | None = None,
) -> tuple[Throughput, Throughput]:
    """The Neo4j-only writes and their bare baseline: the same ``facts`` with their
    ``vectors``, in the same batches, through ``remember_many(vectors=...)`` into
    ``namespaces[0]`` and through the bare statement (:func:`write_bare`) into
    ``namespaces[1]``, one batch of each in turn (in the order AB BA AB ..., so that neither
    always follows the other), each batch timed on its own as :func:`write_facts` times it.
    Both thus write into an index of the same size while the same merges run."""
    ids: tuple[dict[int, str], dict[int, str]] = ({}, {})
    meters = (Meter(pid), Meter(pid))
    tick = ticker(say, "Neo4j-only", len(facts), "facts")
    for n, batch in enumerate(batches):
        rows = vectors[np.asarray(batch, dtype=np.intp)]
        for side in (0, 1) if n % 2 == 0 else (1, 0):
            items = [fact_item(facts[i], ids[side]) for i in batch]
            with meters[side].timing():
                if side == 0:
                    created = [
                        f.id for f in memory.remember_many(items, ns=namespaces[0], vectors=rows)
                    ]
                else:
                    created = write_bare(memory, namespaces[1], items, rows, "bare")
            if len(created) != len(batch):
                raise DatabaseError(f"Neo4j-only: wrote {len(created)} of {len(batch)} facts")
            ids[side].update(zip(batch, created, strict=True))
        done = len(ids[0])
        tick(done, meters[0].seconds)
    return (
        meters[0].throughput(len(facts), len(batches)),
        meters[1].throughput(len(facts), len(batches)),
    )


def with_tail(throughput: Throughput, server_after: float | None) -> Throughput:
    """``throughput`` with the server CPU its phase left to run after it ended."""
    if throughput.cpu is None:
        return throughput
    cpu = throughput.cpu.model_copy(update={"server_after_seconds": server_after})
    return throughput.model_copy(update={"cpu": cpu})


__all__ = [
    "Meter",
    "TimedEmbedder",
    "bare_row",
    "chunks",
    "embed_ceiling",
    "plan_batches",
    "ticker",
    "with_tail",
    "write_bare",
    "write_facts",
    "write_paired",
]
