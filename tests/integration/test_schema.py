"""Schema migrations against a real Neo4j."""

from __future__ import annotations

import time

import neo4j
import pytest

from graphmem.client.graph import Graph
from graphmem.errors import EmbedderMismatchError, SchemaError
from graphmem.settings import GraphmemSettings
from graphmem.store import schema
from graphmem.store.indexes import LATEST_VERSION, MIGRATIONS, VECTOR_STATEMENTS
from tests.helpers import FakeEmbedder

#: Runs on Neo4j 5.26 too (schema, indexes and migrations).
pytestmark = pytest.mark.both_versions


def _indexes(driver: neo4j.Driver, database: str) -> dict[str, dict[str, object]]:
    records, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, type, state, options RETURN name, type, state, options",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return {r["name"]: dict(r) for r in records}


def _properties(driver: neo4j.Driver, database: str) -> dict[str, tuple[str, ...]]:
    records, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, properties RETURN name, properties",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return {r["name"]: tuple(r["properties"] or ()) for r in records}


def _as_at_migration_12(driver: neo4j.Driver, database: str, *, episode_content: bool) -> None:
    """Take a graph back to how graphmem left it at migration 12: its fulltext index of
    episodes on content and namespace (migration 10's, or none when dropped by hand), no
    index of episodes by session and time."""
    driver.execute_query("MATCH (m:GraphmemMigration {version: 13}) DELETE m", database_=database)
    for name in ("episode_content", "episode_ns_session_occurred_at"):
        driver.execute_query(f"DROP INDEX {name}", database_=database)
    if episode_content:
        (statement,) = [
            s
            for n, s in zip(MIGRATIONS[9].creates, MIGRATIONS[9].statements, strict=True)
            if n == "episode_content"
        ]
        for part in statement.split(";"):
            driver.execute_query(part, database_=database)
        schema.await_indexes_online(driver, database=database, only=["episode_content"])


def _count(driver: neo4j.Driver, database: str, label: str) -> int:
    records, _, _ = driver.execute_query(
        f"MATCH (n:{label}) RETURN count(n) AS n",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return int(records[0]["n"])


def test_init_on_an_empty_graph_creates_every_index_online(fresh_graph: Graph) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    report = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    assert report.applied_now == tuple(m.version for m in MIGRATIONS)
    assert report.version == report.latest_version == LATEST_VERSION
    assert report.embedder_model == "fake/hash-embedder"
    assert report.embedding_dimension == 384

    indexes = _indexes(driver, database)
    expected = {name for m in MIGRATIONS for name in m.creates}
    assert expected <= set(indexes)
    assert all(indexes[name]["state"] == "ONLINE" for name in expected)
    for name in ("fact_embedding", "episode_embedding"):
        assert indexes[name]["type"] == "VECTOR"
        config = indexes[name]["options"]["indexConfig"]  # type: ignore[index]
        assert config["vector.dimensions"] == 384
        assert config["vector.similarity_function"] == "COSINE"
    for name in ("fact_text", "episode_content"):
        assert indexes[name]["type"] == "FULLTEXT"
        config = indexes[name]["options"]["indexConfig"]  # type: ignore[index]
        assert config["fulltext.analyzer"] == "english"
        assert config["fulltext.eventually_consistent"] is False
    assert _count(driver, database, "GraphmemMigration") == LATEST_VERSION


def test_init_is_idempotent(graph: Graph, embedder: FakeEmbedder) -> None:
    before = _indexes(graph.driver, graph.database)
    report = schema.apply_schema(graph.driver, database=graph.database, embedder=embedder)
    assert report.applied_now == ()
    assert report.up_to_date
    assert _indexes(graph.driver, graph.database).keys() == before.keys()
    assert _count(graph.driver, graph.database, "GraphmemMigration") == LATEST_VERSION
    assert _count(graph.driver, graph.database, "GraphmemSchema") == 1


def test_a_768_d_embedder_is_refused_on_a_384_d_graph(graph: Graph) -> None:
    before = _indexes(graph.driver, graph.database)
    with pytest.raises(EmbedderMismatchError) as info:
        schema.apply_schema(
            graph.driver, database=graph.database, embedder=FakeEmbedder(768, model_id="fake/768")
        )
    message = str(info.value)
    assert "384" in message and "768" in message
    assert "sentence-transformers/all-MiniLM-L6-v2" in message and "fake/768" in message
    assert _indexes(graph.driver, graph.database) == before
    with pytest.raises(EmbedderMismatchError):
        schema.check_schema(graph.driver, database=graph.database, embedder=FakeEmbedder(768))


def test_the_same_dimension_from_another_model_is_refused(graph: Graph) -> None:
    with pytest.raises(EmbedderMismatchError, match="model mismatch"):
        schema.apply_schema(
            graph.driver,
            database=graph.database,
            embedder=FakeEmbedder(384, model_id="other/model"),
        )


def test_client_connect_refuses_a_mismatched_embedder(
    graph: Graph, test_settings: GraphmemSettings
) -> None:
    with pytest.raises(EmbedderMismatchError, match="768"):
        Graph.open(test_settings, FakeEmbedder(768), target=graph.target)
    with pytest.raises(EmbedderMismatchError, match="768"):
        Graph.open(test_settings, FakeEmbedder(768), target=graph.target, apply_schema=False)


def test_an_unrecorded_vector_index_of_another_dimension_is_refused(fresh_graph: Graph) -> None:
    fresh_graph.driver.execute_query(
        "CREATE VECTOR INDEX fact_embedding FOR (n:Fact) ON (n.embedding) OPTIONS "
        "{indexConfig: {`vector.dimensions`: 768, `vector.similarity_function`: 'cosine'}}",
        database_=fresh_graph.database,
    )
    with pytest.raises(EmbedderMismatchError, match="768"):
        schema.apply_schema(
            fresh_graph.driver, database=fresh_graph.database, embedder=FakeEmbedder(384)
        )
    assert _count(fresh_graph.driver, fresh_graph.database, "GraphmemMigration") == 0


def test_check_without_init_says_what_to_run(fresh_graph: Graph) -> None:
    with pytest.raises(SchemaError, match="graphmem init"):
        schema.check_schema(
            fresh_graph.driver, database=fresh_graph.database, embedder=FakeEmbedder(384)
        )


def test_an_index_of_another_application_under_a_graphmem_name_is_refused(
    fresh_graph: Graph,
) -> None:
    # graphiti-core, for one, creates a fulltext index named episode_content on its own label.
    fresh_graph.driver.execute_query(
        "CREATE FULLTEXT INDEX episode_content FOR (n:Episodic) ON EACH [n.content, n.source]",
        database_=fresh_graph.database,
    )
    with pytest.raises(SchemaError, match=r"'episode_content' covers :Episodic\(content, source\)"):
        schema.apply_schema(
            fresh_graph.driver, database=fresh_graph.database, embedder=FakeEmbedder(384)
        )
    assert _count(fresh_graph.driver, fresh_graph.database, "GraphmemMigration") == 0
    assert "fact_text" not in _indexes(fresh_graph.driver, fresh_graph.database)


@pytest.mark.parametrize(
    ("statement", "problem"),
    [
        (
            "CREATE FULLTEXT INDEX fact_text FOR (n:Fact) ON EACH [n.text] "
            "OPTIONS {indexConfig: {`fulltext.eventually_consistent`: false}}",
            "'fact_text' has fulltext.analyzer 'standard-no-stop-words', graphmem needs 'english'",
        ),
        (
            "CREATE FULLTEXT INDEX episode_content FOR (n:Episode) ON EACH [n.content] "
            "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', "
            "`fulltext.eventually_consistent`: true}}",
            "'episode_content' has fulltext.eventually_consistent True, graphmem needs False",
        ),
        (
            "CREATE VECTOR INDEX fact_embedding FOR (n:Fact) ON (n.embedding) OPTIONS "
            "{indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'euclidean'}}",
            "'fact_embedding' has vector.similarity_function 'EUCLIDEAN', graphmem needs 'cosine'",
        ),
        (
            "CREATE RANGE INDEX fact_id FOR (n:Fact) ON (n.id)",
            "'fact_id' has no uniqueness constraint, graphmem needs one",
        ),
        (
            "CREATE TEXT INDEX fact_ns FOR (n:Fact) ON (n.ns)",
            "'fact_ns' is a TEXT index, graphmem needs a RANGE index",
        ),
    ],
    ids=["analyzer", "eventually-consistent", "euclidean", "no-constraint", "text-index"],
)
def test_an_index_under_a_graphmem_name_built_differently_is_refused(
    fresh_graph: Graph, statement: str, problem: str
) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    driver.execute_query(statement, database_=database)
    before = _indexes(driver, database)
    for check in (schema.apply_schema, schema.check_schema):
        with pytest.raises(SchemaError, match="built differently") as caught:
            check(driver, database=database, embedder=FakeEmbedder(384))
        assert problem in str(caught.value)
        assert "graphmem init" in str(caught.value)
    assert _indexes(driver, database).keys() == before.keys()
    assert _count(driver, database, "GraphmemMigration") == 0


@pytest.mark.parametrize(
    ("statement", "clash"),
    [
        (
            "CREATE RANGE INDEX their_fact_ns FOR (n:Fact) ON (n.ns)",
            "'their_fact_ns' (RANGE) covers :Fact(ns), where graphmem's 'fact_ns' belongs",
        ),
        (
            "CREATE CONSTRAINT their_fact_id FOR (n:Fact) REQUIRE n.id IS UNIQUE",
            "'their_fact_id' (RANGE of constraint 'their_fact_id') covers :Fact(id)",
        ),
        (
            "CREATE RANGE INDEX their_episode_id FOR (n:Episode) ON (n.id)",
            "where graphmem's 'episode_id' belongs",
        ),
        (
            "CREATE FULLTEXT INDEX their_text FOR (n:Fact) ON EACH [n.text] OPTIONS {indexConfig: "
            "{`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}}",
            "'their_text' (FULLTEXT) covers :Fact(text), where graphmem's 'fact_text' belongs",
        ),
        (
            "CREATE VECTOR INDEX their_vectors FOR (n:Episode) ON (n.embedding) OPTIONS "
            "{indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}",
            "where graphmem's 'episode_embedding' belongs",
        ),
    ],
    ids=["range", "unique", "range-for-unique", "fulltext", "vector"],
)
def test_an_index_under_another_name_covering_a_graphmem_index_is_refused(
    fresh_graph: Graph, statement: str, clash: str
) -> None:
    # Neo4j keeps one index of a kind per label and properties: `IF NOT EXISTS` kept the other
    # one, graphmem's never appeared, and init waited the whole schema wait timeout (300 s)
    # for it, then said it was not ONLINE.
    driver, database = fresh_graph.driver, fresh_graph.database
    driver.execute_query(statement, database_=database)
    before = _indexes(driver, database)
    began = time.monotonic()
    with pytest.raises(SchemaError, match="under other names") as applying:
        schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384), timeout=30)
    with pytest.raises(SchemaError, match="under other names") as checking:
        schema.check_schema(driver, database=database, embedder=FakeEmbedder(384))
    assert clash in str(applying.value) and clash in str(checking.value)
    assert time.monotonic() - began < 20
    assert _indexes(driver, database).keys() == before.keys()
    assert _count(driver, database, "GraphmemMigration") == 0


def test_an_index_dropped_and_made_again_under_another_name_is_named(fresh_graph: Graph) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    driver.execute_query("DROP INDEX fact_ns_status", database_=database)
    driver.execute_query(
        "CREATE RANGE INDEX mine FOR (n:Fact) ON (n.ns, n.status)", database_=database
    )
    clash = r"'mine' \(RANGE\) covers :Fact\(ns, status\)"
    with pytest.raises(SchemaError, match=clash):
        schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384), timeout=30)
    with pytest.raises(SchemaError, match=clash):
        schema.check_schema(driver, database=database, embedder=FakeEmbedder(384))
    # The same properties in another order are another index: no clash.
    driver.execute_query("DROP INDEX mine", database_=database)
    driver.execute_query(
        "CREATE RANGE INDEX mine FOR (n:Fact) ON (n.status, n.ns)", database_=database
    )
    report = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384), timeout=20)
    assert report.restored == ("fact_ns_status",)


def test_init_after_dropping_a_differently_built_index_builds_graphmem_s_own(
    fresh_graph: Graph,
) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    driver.execute_query("DROP INDEX fact_text", database_=database)
    driver.execute_query(
        "CREATE FULLTEXT INDEX fact_text FOR (n:Fact) ON EACH [n.text]", database_=database
    )
    with pytest.raises(SchemaError, match=r"'fact_text' has fulltext\.analyzer"):
        schema.check_schema(driver, database=database, embedder=FakeEmbedder(384))
    driver.execute_query("DROP INDEX fact_text", database_=database)
    report = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    assert report.restored == ("fact_text",)
    config = _indexes(driver, database)["fact_text"]["options"]["indexConfig"]  # type: ignore[index]
    assert config["fulltext.analyzer"] == "english"
    assert schema.check_schema(driver, database=database, embedder=FakeEmbedder(384)).up_to_date


def test_init_creates_again_the_indexes_dropped_since_their_migration(fresh_graph: Graph) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    for statement in (
        "DROP INDEX fact_embedding",
        "DROP INDEX episode_content",
        "DROP CONSTRAINT fact_id",
        "DROP INDEX fact_ns_id",
    ):
        driver.execute_query(statement, database_=database)
    with pytest.raises(SchemaError, match=r"missing.*episode_content, fact_embedding, fact_id"):
        schema.check_schema(driver, database=database, embedder=FakeEmbedder(384))

    report = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384), timeout=30)
    assert report.applied_now == ()
    assert sorted(report.restored) == ["episode_content", "fact_embedding", "fact_id", "fact_ns_id"]
    indexes = _indexes(driver, database)
    assert {name for m in MIGRATIONS for name in m.creates} <= set(indexes)
    config = indexes["fact_embedding"]["options"]["indexConfig"]  # type: ignore[index]
    assert config["vector.dimensions"] == 384
    assert schema.check_schema(driver, database=database, embedder=FakeEmbedder(384)).up_to_date
    again = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    assert again.restored == ()
    assert _count(driver, database, "GraphmemMigration") == LATEST_VERSION


def test_init_indexes_episodes_by_session_and_time(graph: Graph) -> None:
    properties = _properties(graph.driver, graph.database)
    assert properties["episode_ns_session_occurred_at"] == ("ns", "session_id", "occurred_at")
    assert _indexes(graph.driver, graph.database)["episode_ns_session_occurred_at"]["type"] == (
        "RANGE"
    )
    assert properties["episode_content"] == ("content", "speaker", "ns")


@pytest.mark.parametrize("dropped", [False, True], ids=["migration-10-index", "dropped-by-hand"])
def test_migration_13_builds_the_episodes_fulltext_index_again_with_speakers(
    fresh_graph: Graph, dropped: bool
) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    embedder = FakeEmbedder(384)
    schema.apply_schema(driver, database=database, embedder=embedder)
    _as_at_migration_12(driver, database, episode_content=not dropped)
    if not dropped:
        assert _properties(driver, database)["episode_content"] == ("content", "ns")
    with pytest.raises(SchemaError, match="at version 12, this graphmem needs 13"):
        schema.check_schema(driver, database=database, embedder=embedder)

    report = schema.apply_schema(driver, database=database, embedder=embedder)
    assert report.applied_now == (13,)
    assert report.restored == ()
    properties = _properties(driver, database)
    assert properties["episode_content"] == ("content", "speaker", "ns")
    assert properties["episode_ns_session_occurred_at"] == ("ns", "session_id", "occurred_at")
    config = _indexes(driver, database)["episode_content"]["options"]["indexConfig"]  # type: ignore[index]
    assert config["fulltext.analyzer"] == "english"
    assert config["fulltext.eventually_consistent"] is False
    assert schema.check_schema(driver, database=database, embedder=embedder).up_to_date


def test_migration_10_s_episodes_index_on_a_graph_past_13_is_refused_until_rebuilt(
    fresh_graph: Graph,
) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    embedder = FakeEmbedder(384)
    schema.apply_schema(driver, database=database, embedder=embedder)
    driver.execute_query("DROP INDEX episode_content", database_=database)
    driver.execute_query(
        "CREATE FULLTEXT INDEX episode_content FOR (n:Episode) ON EACH [n.content, n.ns] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', "
        "`fulltext.eventually_consistent`: false}}",
        database_=database,
    )
    for check in (schema.apply_schema, schema.check_schema):
        with pytest.raises(SchemaError, match="built differently") as caught:
            check(driver, database=database, embedder=embedder)
        assert "'episode_content' covers :Episode(content, ns) as before migration 13" in str(
            caught.value
        )
    driver.execute_query("DROP INDEX episode_content", database_=database)
    report = schema.apply_schema(driver, database=database, embedder=embedder)
    assert report.restored == ("episode_content",)
    assert _properties(driver, database)["episode_content"] == ("content", "speaker", "ns")


def test_a_graph_with_migrations_of_a_newer_graphmem_is_refused(
    graph: Graph, embedder: FakeEmbedder
) -> None:
    driver, database = graph.driver, graph.database
    future = LATEST_VERSION + 1
    driver.execute_query(
        "CREATE (:GraphmemMigration {version: $version, name: 'consolidation runs',"
        " checksum: 'x', applied_at: datetime()})",
        version=future,
        database_=database,
    )
    try:
        before = _indexes(driver, database)
        for check in (schema.apply_schema, schema.check_schema):
            with pytest.raises(SchemaError, match=rf"newer .*: {future} \(consolidation runs\)"):
                check(driver, database=database, embedder=embedder)
        with pytest.raises(SchemaError, match="newer"):
            schema.apply_migrations(driver, database=database)
        assert _indexes(driver, database) == before
    finally:
        driver.execute_query(
            "MATCH (m:GraphmemMigration {version: $version}) DELETE m",
            version=future,
            database_=database,
        )


def test_indexes_are_not_created_again_under_a_reembedding_that_began_meanwhile(
    fresh_graph: Graph,
) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    embedder = FakeEmbedder(384)
    schema.apply_schema(driver, database=database, embedder=embedder)
    # A client has checked the state; then a re-embedding marks the graph and drops the
    # vector indexes before the client looks for missing indexes.
    driver.execute_query(
        "MATCH (s:GraphmemSchema {key: $key}) SET s.reembedding_model = 'other/model',"
        " s.reembedding_dimension = 768, s.reembedding_started_at = datetime()",
        key=schema.SCHEMA_KEY,
        database_=database,
    )
    schema.drop_vector_indexes(driver, database=database)
    existing = schema._index_states(driver, database)
    with pytest.raises(SchemaError, match="being re-embedded"):
        schema._restore_missing(driver, database, {1, 2, 3, 4, 5}, existing, embedder, search=False)
    assert not {"fact_embedding", "episode_embedding"} & set(_indexes(driver, database))


def test_vector_indexes_filter_by_namespace_where_the_server_can(fresh_graph: Graph) -> None:
    driver, database = fresh_graph.driver, fresh_graph.database
    search = schema.server_has_search(driver, database)
    version = driver.execute_query(
        "CALL dbms.components() YIELD versions RETURN versions[0] AS v", database_=database
    ).records[0]["v"]
    assert search == (not version.startswith("5."))  # 2026.09 here, or the 5.26 LTS
    report = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    assert report.filtered_search == search
    assert report.as_dict()["filtered_search"] == search
    properties = {i.name: i.properties for i in report.indexes}
    if search:
        assert properties["fact_embedding"] == ("embedding", "ns", "status")
        assert properties["episode_embedding"] == ("embedding", "ns")
    else:
        assert properties["fact_embedding"] == properties["episode_embedding"] == ("embedding",)
    # A graph whose vector indexes an older server built (migration 9 recorded, nothing
    # done): on a server with in-index filtering, init builds them again with their filters.
    schema.drop_vector_indexes(driver, database=database)
    for statement in VECTOR_STATEMENTS:
        driver.execute_query(statement, dimension=384, database_=database)
    again = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
    assert again.applied_now == ()
    assert again.filtered_search == search
    assert all(i.state == "ONLINE" for i in again.indexes)


def test_processes_starting_at_once_on_an_empty_graph_all_get_the_schema(
    fresh_graph: Graph,
) -> None:
    """Several servers (graphmem serve behind a load balancer) connecting to a new graph at
    the same moment each apply the schema; none fails because another got there first."""
    from concurrent.futures import ThreadPoolExecutor

    driver, database = fresh_graph.driver, fresh_graph.database

    def apply(_: int) -> int:
        report = schema.apply_schema(driver, database=database, embedder=FakeEmbedder(384))
        return report.version

    with ThreadPoolExecutor(4) as pool:
        versions = list(pool.map(apply, range(4)))
    assert versions == [LATEST_VERSION] * 4
    indexes = _indexes(driver, database)
    assert {name for m in MIGRATIONS for name in m.creates} <= set(indexes)
