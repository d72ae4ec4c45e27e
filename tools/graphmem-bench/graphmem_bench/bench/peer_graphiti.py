"""``graphmem bench peer graphiti``: graphmem against graphiti-core on the same Neo4j, facts,
vectors and queries.

For each size, in one run (by default on a throwaway local Neo4j, as ``graphmem bench``):

1. N synthetic facts (:mod:`graphmem_bench.bench.synthetic`, no updates) are embedded once with the
   configured embedder, with the names of the entities graphiti-core needs (the facts'
   subjects and topics) and the queries;
2. **graphmem** stores them with ``Memory.remember_many(..., vectors=...)`` in batches, in a
   namespace of their own;
3. **graphiti-core** stores them in its own schema, in a group_id of their own: one
   ``EntityEdge`` per fact (``fact`` text, ``fact_embedding``, relation name from the fact's
   kind) from the subject's ``EntityNode`` to the topic's, with the nodes' name embeddings,
   through graphiti-core's ``add_nodes_and_edges_bulk`` in the same batches, after its own
   ``build_indices_and_constraints``;
4. after warm-up queries, each query runs through graphmem's ``recall`` (default
   configuration) and graphiti-core's ``Graphiti.search_`` with ``EDGE_HYBRID_SEARCH_RRF``
   (BM25 and cosine similarity fused by RRF, no cross-encoder), both with k = 10. Both sides
   get the query vector from a lookup of the precomputed vectors, so neither pays for
   embedding in the timed call.

graphiti-core is given an LLM client and a cross-encoder that raise if called: nothing here
needs a language model. Its telemetry is turned off before it is imported.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import metadata
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from graphmem import DatabaseError, EmbeddingError, GraphmemSettings, __version__
from graphmem.testing import Progress, import_graphiti, run_query, settle
from graphmem_bench.bench.peer_report import (
    PeerOptions,
    PeerReport,
    PeerSizeResult,
    SideResult,
    evaluate_peer_targets,
    mean_overlap,
    top_k_overlap,
)
from graphmem_bench.bench.report import Percentiles, Throughput
from graphmem_bench.bench.runner import embedder_info, machine_info, server_info
from graphmem_bench.bench.synthetic import SyntheticFact, generate_facts, generate_queries
from graphmem_bench.bench.timing import chunks, embed_ceiling, plan_batches, ticker, write_facts
from graphmem_bench.run import Run, RunOn, measuring_run

if TYPE_CHECKING:
    from graphmem import Memory
    from graphmem.testing import Embedder, Neo4jTarget, Vectors


class PrecomputedEmbedder:
    """An :class:`~graphmem.testing.Embedder` that returns vectors computed beforehand;
    a text it was not given is an error, so no timed call can embed."""

    def __init__(self, model_id: str, dimension: int) -> None:
        self._model_id = model_id
        self._dimension = dimension
        self._vectors: dict[str, Vectors] = {}

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def add(self, texts: Sequence[str], vectors: Vectors) -> None:
        for text, row in zip(texts, vectors, strict=True):
            self._vectors[_key(text)] = row

    def vector(self, text: str) -> Vectors:
        try:
            return self._vectors[_key(text)]
        except KeyError:
            raise EmbeddingError(f"no precomputed vector for {text[:60]!r}") from None

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimension), np.float32)
        return np.vstack([self.vector(text) for text in texts]).astype(np.float32, copy=False)


def _key(text: str) -> str:
    # graphiti-core replaces line breaks by spaces before it embeds a query.
    return text.replace("\n", " ")


def _relation(attribute: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in attribute).upper()


# --- graphiti-core ------------------------------------------------------------------------------
class GraphitiSide:
    """graphiti-core's client on ``target``, driven from synchronous code through one event
    loop, with the lookup embedder and no LLM."""

    def __init__(
        self, settings: GraphmemSettings, target: Neo4jTarget, lookup: PrecomputedEmbedder, k: int
    ) -> None:
        import_graphiti(settings.model_copy(update={"graphiti_telemetry": False}))
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.client import CrossEncoderClient
        from graphiti_core.driver.neo4j_driver import Neo4jDriver
        from graphiti_core.embedder.client import EmbedderClient
        from graphiti_core.llm_client.client import LLMClient
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF

        class LookupEmbedder(EmbedderClient):
            async def create(self, input_data: Any) -> list[float]:
                text = input_data[0] if isinstance(input_data, list) else input_data
                if not isinstance(text, str):
                    raise EmbeddingError("the benchmark embeds texts only")
                return [float(x) for x in lookup.vector(text)]

            async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
                return [[float(x) for x in lookup.vector(text)] for text in input_data_list]

        class NoLLM(LLMClient):
            async def _generate_response(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
                raise RuntimeError("the peer benchmark calls no LLM")

        class NoCrossEncoder(CrossEncoderClient):
            async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
                raise RuntimeError("the peer benchmark uses no cross-encoder")

        self.version = metadata.version("graphiti-core")
        self._runner = asyncio.Runner()
        self.driver = Neo4jDriver(
            target.uri, target.user, target.password.get_secret_value(), target.database
        )
        self.embedder = LookupEmbedder()
        self.graphiti = Graphiti(
            graph_driver=self.driver,
            llm_client=NoLLM(None),
            embedder=self.embedder,
            cross_encoder=NoCrossEncoder(),
        )
        # A copy: the recipe is a module-level object shared by every graphiti-core user.
        self.config = EDGE_HYBRID_SEARCH_RRF.model_copy(update={"limit": k})

    def build_indices(self) -> None:
        self._runner.run(self.driver.build_indices_and_constraints())

    def save(self, nodes: list[Any], edges: list[Any]) -> None:
        from graphiti_core.utils.bulk_utils import add_nodes_and_edges_bulk

        self._runner.run(add_nodes_and_edges_bulk(self.driver, [], [], nodes, edges, self.embedder))

    def search(self, text: str, group_id: str) -> tuple[list[str], float]:
        """The uuids of the edges found, best first, and the seconds the call took."""
        return self._runner.run(self._timed_search(text, group_id))

    async def _timed_search(self, text: str, group_id: str) -> tuple[list[str], float]:
        began = time.perf_counter()
        results = await self.graphiti.search_(text, config=self.config, group_ids=[group_id])
        seconds = time.perf_counter() - began
        return [edge.uuid for edge in results.edges], seconds

    def close(self) -> None:
        try:
            self._runner.run(self.driver.close())
        finally:
            self._runner.close()


def _write_graphiti(
    side: GraphitiSide,
    group_id: str,
    facts: Sequence[SyntheticFact],
    vectors: Vectors,
    name_vectors: Mapping[str, Vectors],
    batch_size: int,
    label: str,
    say: Progress,
) -> tuple[Throughput, list[str], int]:
    """Writes every fact as an edge; returns the throughput, each fact's edge uuid and the
    number of entity nodes. A batch saves the nodes its edges are the first to need; building
    graphiti-core's node and edge objects is timed with the save."""
    from graphiti_core.edges import EntityEdge
    from graphiti_core.nodes import EntityNode

    created = datetime.now(UTC)
    entity_uuids: dict[str, str] = {}
    edge_uuids: list[str] = []
    tick = ticker(say, label, len(facts), "facts")
    seconds = 0.0
    batches = 0
    for chunk in chunks(len(facts), batch_size):
        began = time.perf_counter()
        nodes = []
        for i in chunk:
            for name in (facts[i].subject, facts[i].topic):
                if name not in entity_uuids:
                    entity_uuids[name] = str(uuid.uuid4())
                    nodes.append(
                        EntityNode(
                            uuid=entity_uuids[name],
                            name=name,
                            group_id=group_id,
                            labels=["Entity"],
                            created_at=created,
                            name_embedding=name_vectors[name].tolist(),
                        )
                    )
        edges = [
            EntityEdge(
                group_id=group_id,
                source_node_uuid=entity_uuids[facts[i].subject],
                target_node_uuid=entity_uuids[facts[i].topic],
                created_at=created,
                valid_at=created,
                reference_time=created,
                name=_relation(facts[i].attribute),
                fact=facts[i].text,
                fact_embedding=vectors[i].tolist(),
                episodes=[],
            )
            for i in chunk
        ]
        side.save(nodes, edges)
        seconds += time.perf_counter() - began
        batches += 1
        edge_uuids += [edge.uuid for edge in edges]
        tick(chunk.stop, seconds)
    return (
        Throughput(items=len(facts), seconds=seconds, batches=batches),
        edge_uuids,
        len(entity_uuids),
    )


def _entity_names(facts: Sequence[SyntheticFact]) -> list[str]:
    return list(dict.fromkeys(name for f in facts for name in (f.subject, f.topic)))


def _embed(embedder: Embedder, texts: Sequence[str], batch_size: int) -> Vectors:
    parts = [embedder.embed(list(texts[c.start : c.stop])) for c in chunks(len(texts), batch_size)]
    return np.vstack(parts) if parts else np.zeros((0, embedder.dimension), np.float32)


def _random_vectors(count: int, dimension: int, seed: int) -> Vectors:
    rows = np.random.default_rng(seed).standard_normal((count, dimension))
    unit: Vectors = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _graphiti_edges(memory: Memory, group_id: str) -> int:
    rows = run_query(memory, "peer_graphiti_edges", group_id=group_id)
    return int(rows[0]["edges"])


# --- the run ------------------------------------------------------------------------------------
def _warm_up(
    memory: Memory, side: GraphitiSide, prefix: str, options: PeerOptions, say: Progress
) -> None:
    """Untimed writes through both systems (random vectors), so that the first measured size
    does not pay for a cold server."""
    count = options.warmup_facts
    name = f"{prefix}-warmup"
    say(f"warming up: {count:,} facts with random vectors through each system")
    facts = generate_facts(count, seed=options.seed - 1, update_share=0.0)
    dimension = memory.embedder.dimension
    vectors = _random_vectors(count, dimension, options.seed)
    names = _entity_names(facts)
    name_rows = _random_vectors(len(names), dimension, options.seed + 1)
    name_vectors = dict(zip(names, name_rows, strict=True))
    batches = plan_batches(facts, options.batch_size)
    write_facts(memory, name, facts, batches, vectors, "graphmem warm-up", say)
    _write_graphiti(
        side, name, facts, vectors, name_vectors, options.batch_size, "graphiti warm-up", say
    )


def _write_both(
    memory: Memory,
    side: GraphitiSide,
    name: str,
    facts: Sequence[SyntheticFact],
    vectors: Vectors,
    name_vectors: Mapping[str, Vectors],
    options: PeerOptions,
    pid: int | None,
    say: Progress,
) -> tuple[tuple[Throughput, int, dict[int, str]], tuple[Throughput, int, list[str]], int]:
    """``facts`` written through each system, each timed once the server is idle: for each its
    throughput, stored count and ids (graphmem's facts, graphiti-core's edges), and the
    entities graphiti-core made."""
    batches = plan_batches(facts, options.batch_size)
    settle(pid, "timing graphmem's writes", say)
    gm_write, fact_ids = write_facts(memory, name, facts, batches, vectors, "graphmem", say)
    settle(pid, "timing graphiti-core's writes", say)
    gt_write, edge_uuids, entities = _write_graphiti(
        side, name, facts, vectors, name_vectors, options.batch_size, "graphiti-core", say
    )
    gm_stored = memory.stats(ns=name).facts
    gt_stored = _graphiti_edges(memory, name)
    if gm_stored != len(facts) or gt_stored != len(facts):
        raise DatabaseError(f"stored {gm_stored} graphmem facts and {gt_stored} graphiti edges")
    return (gm_write, gm_stored, fact_ids), (gt_write, gt_stored, edge_uuids), entities


def _peer_size(
    memory: Memory,
    side: GraphitiSide,
    embedder: Embedder,
    lookup: PrecomputedEmbedder,
    size: int,
    options: PeerOptions,
    prefix: str,
    pid: int | None,
    say: Progress,
) -> PeerSizeResult:
    seed = options.seed * 1_000_003 + size
    facts = generate_facts(size, seed=seed, update_share=0.0)
    queries = generate_queries(facts, options.warmup + options.queries, seed=seed + 2)
    name = f"{prefix}-{size}"
    say(f"{size:,} facts: graphmem namespace and graphiti group_id {name}")
    embedding, vectors = embed_ceiling(embedder, [f.text for f in facts], options.batch_size, say)
    names = _entity_names(facts)
    name_vectors = dict(zip(names, _embed(embedder, names, options.batch_size), strict=True))
    texts = [q.text for q in queries]
    lookup.add(texts, _embed(embedder, texts, options.batch_size))
    (gm_write, gm_stored, fact_ids), (gt_write, gt_stored, edge_uuids), entities = _write_both(
        memory, side, name, facts, vectors, name_vectors, options, pid, say
    )
    edge_of = {fact_ids[i]: edge_uuids[i] for i in range(size)}
    settle(pid, "timing the searches", say)
    for q in queries[: options.warmup]:
        memory.recall(q.text, ns=name, k=options.k)
        side.search(q.text, name)
    gm_ms: list[float] = []
    gt_ms: list[float] = []
    overlaps: list[float | None] = []
    gm_hits = gt_hits = gm_found = gt_found = 0
    tick = ticker(say, "searches", options.queries, "queries (each system)")
    began = time.perf_counter()
    for done, q in enumerate(queries[options.warmup :], start=1):
        start = time.perf_counter()
        result = memory.recall(q.text, ns=name, k=options.k)
        gm_ms.append(1000 * (time.perf_counter() - start))
        ours = [hit.id for hit in result.hits if hit.kind == "fact"]
        theirs, seconds = side.search(q.text, name)
        gt_ms.append(1000 * seconds)
        overlaps.append(top_k_overlap(ours, theirs, edge_of))
        gm_hits += len(ours)
        gt_hits += len(theirs)
        gm_found += fact_ids[q.fact_index] in ours
        gt_found += edge_uuids[q.fact_index] in theirs
        tick(done, time.perf_counter() - began)
    overlap, overlap_queries = mean_overlap(overlaps)
    measured = max(1, options.queries)
    return PeerSizeResult(
        size=size,
        namespace=name,
        group_id=name,
        entities=entities,
        embedding=embedding,
        queries=options.queries,
        warmup=options.warmup,
        k=options.k,
        graphmem=SideResult(
            system="graphmem",
            stored=gm_stored,
            write=gm_write,
            search_ms=Percentiles.of(gm_ms),
            mean_hits=gm_hits / measured,
            found_share=gm_found / measured,
        ),
        graphiti=SideResult(
            system="graphiti-core",
            stored=gt_stored,
            write=gt_write,
            search_ms=Percentiles.of(gt_ms),
            mean_hits=gt_hits / measured,
            found_share=gt_found / measured,
        ),
        overlap=overlap,
        overlap_queries=overlap_queries,
    )


def run_peer_bench(options: PeerOptions | None = None, **on: Unpack[RunOn]) -> PeerReport:
    """Compare graphmem with graphiti-core and return the report.

    As :func:`graphmem_bench.bench.runner.run_bench`: ``server="scratch"`` (the default) starts
    and deletes a throwaway local Neo4j; ``"configured"`` uses ``target`` (default: the
    settings' Neo4j) and leaves the ``<prefix>-*`` namespaces and group_ids there.
    """
    options = options or PeerOptions()
    with measuring_run(options, **on) as run:
        return _run(options, run)


@contextmanager
def _quiet_notifications() -> Iterator[None]:
    """graphiti-core's driver logs every server notification (such as "this property does not
    exist yet") as a warning on each query; they are kept out of the output and the timings."""
    logger = logging.getLogger("neo4j.notifications")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _run(options: PeerOptions, run: Run) -> PeerReport:
    settings, target, say, started = run.settings, run.target, run.say, run.started
    embedder = run.embedder
    prefix = f"peer-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(2)}"
    lookup = PrecomputedEmbedder(embedder.model_id, embedder.dimension)
    # graphmem's schema first: graphiti-core's fulltext index over its Episodic nodes has the
    # name of graphmem's episode index, and its CREATE ... IF NOT EXISTS then leaves it alone.
    with _quiet_notifications():
        memory = run.memory(embedder=lookup)
        server = server_info(memory, run)
        side = GraphitiSide(settings, target, lookup, options.k)
        try:
            side.build_indices()
            say(
                f"Neo4j {server.neo4j_version} at {target.uri}; graphiti-core {side.version}; "
                f"{prefix}-*"
            )
            # Each timed phase starts once the work left by the one before is done, so that
            # neither system is charged for the other's writes (see scratch_server_pid).
            pid = run.server_pid
            if options.warmup_facts:
                _warm_up(memory, side, prefix, options, say)
            results = [
                _peer_size(memory, side, embedder, lookup, size, options, prefix, pid, say)
                for size in options.sizes
            ]
        finally:
            side.close()
    return PeerReport(
        graphmem_version=__version__,
        peer_version=side.version,
        started_at=started,
        finished_at=datetime.now(UTC),
        options=options,
        machine=machine_info(),
        server=server,
        embedder=embedder_info(embedder, settings),
        prefix=prefix,
        sizes=results,
        targets=evaluate_peer_targets(results),
    )


__all__ = ["GraphitiSide", "PrecomputedEmbedder", "run_peer_bench"]
