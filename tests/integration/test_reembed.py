"""Re-embedding moves a graph to another model, resumes after a stop, and refuses clients
while it runs (against the real Neo4j)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.client.reembed import reembed, reembed_plan
from graphmem.embed.embedder import Embedder, Vectors
from graphmem.errors import EmbedderMismatchError, SchemaError
from graphmem.settings import GraphmemSettings
from graphmem.store.cypher import query
from graphmem.store.db import execute as run_query
from graphmem.store.indexes import MIGRATIONS
from graphmem.store.schema import (
    SCHEMA_KEY,
    create_vector_indexes,
    drop_vector_indexes,
    read_state,
)
from tests.helpers import FakeEmbedder, cli_env

#: Runs on Neo4j 5.26 too (schema, indexes and migrations: the vector indexes are built again).
pytestmark = pytest.mark.both_versions

SMALL = FakeEmbedder(16, model_id="fake/16-d")


class _Hooked:
    """An embedder that runs ``hook(call_number)`` before each embed (to fail or to write)."""

    def __init__(self, inner: Embedder, hook: Any) -> None:
        self.inner, self.hook, self.calls = inner, hook, 0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.hook(self.calls)
        return self.inner.embed(texts)


def _dimensions(graph: Graph) -> dict[str, set[int]]:
    records, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE n:Fact OR n:Episode "
        "RETURN labels(n)[0] AS label, collect(DISTINCT size(n.embedding)) AS sizes",
        database_=graph.database,
    )
    return {r["label"]: set(r["sizes"]) for r in records}


def _index_dimensions(graph: Graph) -> dict[str, int]:
    records, _, _ = graph.driver.execute_query(
        "SHOW VECTOR INDEXES YIELD name, options "
        "RETURN name, options.indexConfig['vector.dimensions'] AS dimension",
        database_=graph.database,
    )
    return {r["name"]: int(r["dimension"]) for r in records}


def test_reembed_moves_the_graph_to_another_model_and_resumes_after_a_stop(
    fresh_graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    graph, db = fresh_graph, fresh_graph.database
    # A client of the old model, connected before the run and left connected throughout.
    stale = Memory(test_settings, target=graph.target, embedder=embedder, ns="b").connect()
    with Memory(test_settings, target=graph.target, embedder=embedder, ns="a") as memory:
        google = memory.remember("The user works at Google.")
        moved = memory.remember("The user works at Microsoft.", supersedes=[google.id])
        memory.remember_many([f"The user owns plant number {i}." for i in range(5)])
        memory.ingest(["I moved to Porto last spring.", "My dog is called Biscuit."])
        memory.remember("The user likes tea.", ns="b")
        before = memory.history(moved.id)

    plan = reembed_plan(graph.driver, database=db, embedder=SMALL)
    assert (plan.facts, plan.episodes, plan.namespaces) == (8, 2, 2)
    assert (plan.from_model, plan.from_dimension) == (embedder.model_id, 384)
    assert not plan.resumes and not plan.up_to_date

    written: list[str] = []

    def stop_at_third(call: int) -> None:
        if call == 3:
            raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        reembed(graph.driver, database=db, embedder=_Hooked(SMALL, stop_at_third), batch_size=2)
    state = read_state(graph.driver, db)
    assert state is not None and state["reembedding_model"] == "fake/16-d"
    # Mixed vectors meanwhile: every client is refused, whatever its model.
    for model in (embedder, SMALL):
        with pytest.raises(SchemaError, match="being re-embedded with 'fake/16-d'"):
            Graph.open(test_settings, model, target=graph.target)
    # So is the client that was connected before: it checks the graph's model in each
    # transaction, so it writes no vector of its model and compares none with the new ones.
    with pytest.raises(SchemaError, match="being re-embedded"):
        stale.remember("Written by a client connected before.")
    with pytest.raises(SchemaError, match="re-embedded"):
        stale.recall("what does the user like")

    resumed_plan = reembed_plan(graph.driver, database=db, embedder=SMALL)
    assert resumed_plan.resumes and resumed_plan.replaces is None
    # A run that is alive (it wrote a batch just now) is not joined by a second one.
    graph.driver.execute_query(
        "MATCH (s:GraphmemSchema) SET s.reembedding_heartbeat = datetime()", database_=db
    )
    assert reembed_plan(graph.driver, database=db, embedder=SMALL).running_since_heartbeat
    with pytest.raises(SchemaError, match="another run is re-embedding the graph"):
        reembed(graph.driver, database=db, embedder=SMALL)
    graph.driver.execute_query(  # that run stops and gives its claim up
        "MATCH (s:GraphmemSchema) SET s.reembedding_heartbeat = null", database_=db
    )

    def write_meanwhile(call: int) -> None:
        if call == 1:  # a writer that does not check the model (an older graphmem)
            graph.driver.execute_query(
                "CREATE (:Fact {id: 'late', ns: 'b', text: 'Written meanwhile.',"
                " text_hash: 'h', status: 'active', recorded_at: datetime(),"
                " embedding: [x IN range(1, 384) | 0.05]})",
                database_=db,
            )
            written.append("late")

    report = reembed(
        graph.driver, database=db, embedder=_Hooked(SMALL, write_meanwhile), batch_size=2
    )
    assert written == ["late"]
    # The first run's two batches are not embedded again; what was written meanwhile is.
    assert report.plan.resumes and (report.facts, report.episodes) == (5, 2)
    assert report.caught_up == 1
    assert _dimensions(graph) == {"Fact": {16}, "Episode": {16}}
    assert _index_dimensions(graph) == {"fact_embedding": 16, "episode_embedding": 16}
    state = read_state(graph.driver, db)
    assert state is not None and state["reembedding_model"] is None
    assert (state["embedder_model"], state["embedding_dimension"]) == ("fake/16-d", 16)

    # The old model is refused now, also by the client still connected; the new one
    # recalls, with the history untouched.
    with pytest.raises(EmbedderMismatchError):
        Graph.open(test_settings, embedder, target=graph.target)
    for call in (lambda: stale.remember("Too late."), lambda: stale.recall("tea")):
        with pytest.raises(EmbedderMismatchError, match="fake/16-d"):
            call()
    stale.close()
    with Memory(test_settings, target=graph.target, embedder=SMALL, ns="a") as memory:
        assert memory.history(moved.id) == before
        assert memory.stats().facts == 7
        hit = memory.recall("The user works at Microsoft.", kinds=["fact"]).hits[0]
        assert hit.id == moved.id and hit.scores.vector == pytest.approx(1.0, abs=1e-3)
    assert reembed_plan(graph.driver, database=db, embedder=SMALL).up_to_date
    again = reembed(graph.driver, database=db, embedder=SMALL)
    assert again.facts == again.episodes == 0

    # The command line moves it back to the configured (default) model.
    env = cli_env(graph)
    runner = CliRunner()
    declined = runner.invoke(main, ["reembed"], env=env, input="n\n")
    assert declined.exit_code == 1 and "Re-embed 9 fact(s) and 2 episode(s)" in declined.stderr
    assert _dimensions(graph)["Fact"] == {16}
    done = runner.invoke(main, ["reembed", "--yes", "--json"], env=env)
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["done"] and (data["facts"], data["episodes"]) == (9, 2)
    assert _dimensions(graph) == {"Fact": {384}, "Episode": {384}}
    nothing = runner.invoke(main, ["reembed", "--yes"], env=env)
    assert nothing.exit_code == 0 and "Nothing to do" in nothing.stdout
    nothing = runner.invoke(main, ["reembed", "--yes", "--json"], env=env)
    assert nothing.exit_code == 0, nothing.output
    same_keys = json.loads(nothing.stdout)
    assert same_keys.keys() == data.keys() and not same_keys["done"]
    assert (same_keys["facts"], same_keys["episodes"], same_keys["caught_up"]) == (0, 0, 0)
    with Memory(test_settings, target=graph.target, embedder=embedder, ns="a") as memory:
        hits = memory.recall("where does the user work", kinds=["fact"]).hits
        assert hits[0].id == moved.id


def test_one_run_holds_the_reembedding_while_it_is_alive_and_builds_indexes_only_then(
    fresh_graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph, db = fresh_graph, fresh_graph.database
    _plants(graph, test_settings, embedder, 3)

    # Two runs claiming at the same moment: one gets the claim, never both.
    claim = query("reembed_claim")

    def claim_as(token: str, model: str, won: list[str], start: threading.Barrier) -> None:
        start.wait()
        (row,) = run_query(
            graph.driver,
            graph.database,
            claim,
            key=SCHEMA_KEY,
            model=model,
            dimension=16,
            token=token,
            lease=120,
        )
        if row["token"] == token:
            won.append(token)

    for _ in range(10):
        won: list[str] = []
        start = threading.Barrier(2)
        runs = [
            threading.Thread(target=claim_as, args=(token, f"fake/{token}", won, start))
            for token in ("x", "y")
        ]
        for run in runs:
            run.start()
        for run in runs:
            run.join(30)
        assert len(won) == 1, won
        graph.driver.execute_query(
            "MATCH (s:GraphmemSchema) REMOVE s.reembedding_model, s.reembedding_dimension, "
            "s.reembedding_started_at, s.reembedding_cursor, s.reembedding_token, "
            "s.reembedding_heartbeat",
            database_=db,
        )

    # A run that is alive keeps its claim through a step slower than the lease (here a batch
    # that takes 6 s to embed, against a lease of 4 s), and a second run is refused meanwhile.
    monkeypatch.setattr("graphmem.client.reembed.LEASE_SECONDS", 4)
    stalled = threading.Event()
    outcome: dict[str, Any] = {}

    def stall(call: int) -> None:
        if call == 1:
            stalled.set()
            time.sleep(6)

    def first_run() -> None:
        try:
            outcome["report"] = reembed(graph.driver, database=db, embedder=_Hooked(SMALL, stall))
        except Exception as exc:  # checked below, in the test's thread
            outcome["error"] = exc

    runner = threading.Thread(target=first_run)
    runner.start()
    assert stalled.wait(60)
    time.sleep(5)  # past the lease, still inside the slow step
    plan = reembed_plan(graph.driver, database=db, embedder=SMALL)
    assert plan.resumes and plan.running_since_heartbeat is not None
    with pytest.raises(SchemaError, match="another run is re-embedding the graph"):
        reembed(graph.driver, database=db, embedder=SMALL)
    runner.join(60)
    assert "error" not in outcome, outcome
    assert outcome["report"].facts == 3
    assert _index_dimensions(graph) == {"fact_embedding": 16, "episode_embedding": 16}

    # A run that another took over (it showed no sign of life for a lease) builds no index
    # for its dimension at the end: it stops, and leaves the indexes to the run that holds it.
    def taken_over(_: int) -> None:
        graph.driver.execute_query(
            "MATCH (s:GraphmemSchema) SET s.reembedding_token = 'another run', "
            "s.reembedding_heartbeat = datetime()",
            database_=db,
        )

    with pytest.raises(SchemaError, match="took the re-embedding over"):
        reembed(graph.driver, database=db, embedder=embedder, progress=taken_over)
    assert _index_dimensions(graph) == {}
    assert _dimensions(graph) == {"Fact": {384}}
    # Had it built them (at 384 dimensions), indexes built for the finishing run replace them.
    create_vector_indexes(graph.driver, database=db, dimension=384)
    create_vector_indexes(graph.driver, database=db, dimension=16)
    assert _index_dimensions(graph) == {"fact_embedding": 16, "episode_embedding": 16}
    graph.driver.execute_query(  # the other run gives up too
        "MATCH (s:GraphmemSchema) SET s.reembedding_heartbeat = null", database_=db
    )
    report = reembed(graph.driver, database=db, embedder=SMALL)
    assert report.plan.replaces == embedder.model_id and report.facts == 3
    assert _index_dimensions(graph) == {"fact_embedding": 16, "episode_embedding": 16}
    with Memory(test_settings, target=graph.target, embedder=SMALL, ns="a") as memory:
        assert len(memory.recall("plant number 2").hits) > 0
    # Indexes of another dimension under the recorded model (made by hand, or left by an older
    # graphmem) refuse every client: the same command repairs them.
    drop_vector_indexes(graph.driver, database=db)
    create_vector_indexes(graph.driver, database=db, dimension=384)
    with pytest.raises(EmbedderMismatchError, match="unrecorded model"):
        Graph.open(test_settings, SMALL, target=graph.target)
    assert not reembed_plan(graph.driver, database=db, embedder=SMALL).up_to_date
    reembed(graph.driver, database=db, embedder=SMALL)
    assert _index_dimensions(graph) == {"fact_embedding": 16, "episode_embedding": 16}
    assert reembed_plan(graph.driver, database=db, embedder=SMALL).up_to_date


def _plants(graph: Graph, settings: GraphmemSettings, embedder: Embedder, count: int) -> None:
    """``count`` facts in namespace "a", embedded by ``embedder``."""
    with Memory(settings, target=graph.target, embedder=embedder, ns="a") as memory:
        memory.remember_many([f"The user owns plant number {i}." for i in range(count)])


def _cursor(graph: Graph) -> list[str] | None:
    records, _, _ = graph.driver.execute_query(
        "MATCH (s:GraphmemSchema) RETURN s.reembedding_cursor AS cursor", database_=graph.database
    )
    return records[0]["cursor"] if records else None


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_command_gives_its_claim_up_when_it_is_terminated(
    fresh_graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    signum: signal.Signals,
) -> None:
    graph, db = fresh_graph, fresh_graph.database
    _plants(graph, test_settings, SMALL, 400)
    env = {**os.environ, **cli_env(graph)}
    # Started as from a terminal or a supervisor: the signals at Python's defaults. The run
    # stops between two transactions, so the driver it releases its claim with is intact (an
    # exception raised inside the driver's read left it unusable: a BufferError, exit 1).
    command = (
        "import signal, sys; from graphmem.cli import main; "
        "signal.signal(signal.SIGTERM, signal.SIG_DFL); "
        "signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.exit(main(['reembed', '--yes', '--batch-size', '1']))"
    )
    run = subprocess.Popen([sys.executable, "-c", command], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not _cursor(graph):
            assert run.poll() is None and time.monotonic() < deadline, "no batch was written"
            time.sleep(0.1)
        run.send_signal(signum)
        _, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 128 + signum, stderr
    state = read_state(graph.driver, db)
    assert state is not None and state["reembedding_model"] == embedder.model_id
    assert state["reembedding_heartbeat"] is None  # released: the next run resumes at once
    plan = reembed_plan(graph.driver, database=db, embedder=SMALL)
    assert plan.running_since_heartbeat is None and plan.replaces is not None


def test_a_reembedding_left_unfinished_on_an_older_schema_is_finished_by_the_new_code(
    fresh_graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    graph, db = fresh_graph, fresh_graph.database
    _plants(graph, test_settings, embedder, 5)

    def stop(call: int) -> None:
        if call == 2:
            raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        reembed(graph.driver, database=db, embedder=_Hooked(SMALL, stop), batch_size=2)
    # As an older graphmem would have left it: the latest migration not applied.
    latest = MIGRATIONS[-1]
    graph.driver.execute_query(
        "MATCH (m:GraphmemMigration {version: $version}) DELETE m",
        version=latest.version,
        database_=db,
    )
    for name in latest.creates:  # a constraint's index goes with its constraint
        graph.driver.execute_query(f"DROP CONSTRAINT {name} IF EXISTS", database_=db)
        graph.driver.execute_query(f"DROP INDEX {name} IF EXISTS", database_=db)
    # Clients and `graphmem init` refuse the unfinished graph; the run finishes it.
    with pytest.raises(SchemaError, match="being re-embedded"):
        Graph.open(test_settings, SMALL, target=graph.target)
    report = reembed(graph.driver, database=db, embedder=SMALL, batch_size=2)
    assert report.plan.resumes and report.facts == 3  # after the first run's batch of 2
    assert _dimensions(graph) == {"Fact": {16}}
    with Graph.open(test_settings, SMALL, target=graph.target) as reopened:
        assert reopened.schema.version == latest.version and reopened.schema.applied_now == ()


def test_an_episode_is_embedded_again_with_its_speaker_as_ingest_embeds_it(
    fresh_graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    """With --again, a graph already on the model is embedded again (as after episodes came
    to be embedded with their speaker); an episode is embedded as ingest embeds it."""
    graph, db = fresh_graph, fresh_graph.database
    with Memory(test_settings, target=graph.target, embedder=embedder, ns="a") as memory:
        memory.ingest(
            [{"content": "My dog is called Biscuit.", "speaker": "Melanie"}, "I moved to Porto."]
        )
        memory.remember("The user likes tea.")
    texts: list[str] = []

    class Recording(_Hooked):
        def embed(self, batch: Sequence[str]) -> Vectors:
            texts.extend(batch)
            return super().embed(batch)

    same_model = Recording(embedder, lambda _: None)
    nothing = reembed(graph.driver, database=db, embedder=same_model)
    assert (nothing.facts, nothing.episodes, texts) == (0, 0, [])
    report = reembed(graph.driver, database=db, embedder=same_model, again=True)
    assert (report.facts, report.episodes) == (1, 2)
    assert sorted(texts) == [
        "I moved to Porto.",
        "Melanie: My dog is called Biscuit.",
        "The user likes tea.",
    ]
    state = read_state(graph.driver, db)
    assert state is not None and state["embedder_model"] == embedder.model_id

    env = cli_env(graph)
    runner = CliRunner()
    declined = runner.invoke(main, ["reembed", "--again"], env=env, input="n\n")
    assert declined.exit_code == 1
    assert "Re-embed 1 fact(s) and 2 episode(s) in 1 namespace(s) again" in declined.stderr
    done = runner.invoke(main, ["reembed", "--again", "--yes", "--json"], env=env)
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["done"] and (data["facts"], data["episodes"]) == (1, 2)
    with Memory(test_settings, target=graph.target, embedder=embedder, ns="a") as memory:
        (hit,) = memory.recall("Melanie's dog", kinds=["episode"], k=1).hits
        assert hit.episode is not None and hit.episode.speaker == "Melanie"


def test_a_graph_with_migrations_of_a_newer_graphmem_is_refused_before_anything(
    fresh_graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    graph, db = fresh_graph, fresh_graph.database
    _plants(graph, test_settings, embedder, 2)
    graph.driver.execute_query(
        "CREATE (:GraphmemMigration {version: $version, name: 'consolidation runs',"
        " checksum: 'x', applied_at: datetime()})",
        version=MIGRATIONS[-1].version + 1,
        database_=db,
    )
    # Refused like `graphmem init` refuses it, also when the model is the graph's own (which
    # would otherwise be "nothing to do"), and before the plan is shown.
    for target in (embedder, SMALL):
        with pytest.raises(SchemaError, match="newer"):
            reembed_plan(graph.driver, database=db, embedder=target)
        with pytest.raises(SchemaError, match="newer"):
            reembed(graph.driver, database=db, embedder=target)
    assert _dimensions(graph) == {"Fact": {embedder.dimension}}
