from __future__ import annotations

import pytest

from graphmem.errors import SchemaError
from graphmem.store.indexes import (
    INDEX_SHAPES,
    MIGRATIONS,
    VECTOR_INDEXES,
    IndexState,
    check_shapes,
    other_clashes,
)
from graphmem.store.schema import check_dimension


def test_migrations_are_numbered_in_order_and_create_distinct_names() -> None:
    versions = [m.version for m in MIGRATIONS]
    assert versions == list(range(1, len(MIGRATIONS) + 1))
    for migration in MIGRATIONS:
        assert len(migration.statements) == len(migration.creates)
    # Statements that build earlier indexes again drop them first.
    built = [
        (m.version, n, s) for m in MIGRATIONS for n, s in zip(m.creates, m.statements, strict=True)
    ]
    rebuilt = [(v, n) for v, n, s in built if s.startswith(f"DROP INDEX {n} IF EXISTS;")]
    assert rebuilt == [
        (9, "fact_embedding"),
        (9, "episode_embedding"),
        (10, "fact_text"),
        (10, "episode_content"),
        (13, "episode_content"),
    ]
    names = [n for v, n, _ in built if (v, n) not in rebuilt]
    assert len(names) == len(set(names))
    assert {n for _, n in rebuilt} <= set(names)
    # Created again when missing, a rebuilt index is not dropped first.
    for migration in MIGRATIONS:
        for statement, creating in zip(migration.statements, migration.creating, strict=True):
            assert "DROP" not in creating
            assert statement.endswith(creating)
    # The one migration for servers with in-index filtering builds the vector indexes again.
    (filtered,) = [m for m in MIGRATIONS if m.needs_search]
    assert set(filtered.creates) == set(VECTOR_INDEXES)
    assert all(
        s.startswith(f"DROP INDEX {n} IF EXISTS;")
        for n, s in zip(filtered.creates, filtered.statements, strict=True)
    )


def test_every_statement_is_idempotent_and_names_what_it_creates() -> None:
    for migration in MIGRATIONS:
        for name, statement in zip(migration.creates, migration.statements, strict=True):
            assert "IF NOT EXISTS" in statement
            assert f" {name} " in statement


def test_vector_indexes_take_the_dimension_as_a_parameter() -> None:
    vector = [s for m in MIGRATIONS for s in m.statements if "VECTOR INDEX" in s]
    assert len(vector) == 2 * len(VECTOR_INDEXES) == 4  # plain, and with filter properties
    for statement in vector:
        assert "$dimension" in statement
        assert "'cosine'" in statement


def test_schema_covers_the_design_contract() -> None:
    names = {name for m in MIGRATIONS for name in m.creates}
    assert {
        "fact_id",
        "episode_id",
        "fact_embedding",
        "episode_embedding",
        "fact_text",
        "episode_content",
    } <= names


def test_checksums_are_stable_and_distinct() -> None:
    sums = [m.checksum for m in MIGRATIONS]
    assert len(set(sums)) == len(sums)
    assert sums == [m.checksum for m in MIGRATIONS]
    # Released migrations are immutable: graphs record these.
    assert dict(enumerate(sums[:12], start=1)) == {
        1: "0c74d0bb00cd0088",
        2: "6a3cdf2216b466f4",
        3: "e8e04914def3324e",
        4: "063b354ca807fb54",
        5: "27448f40d782a613",
        6: "019f3799efa6024b",
        7: "5c8c2f9297de7ce6",
        8: "6ab276fc46fb914b",
        9: "b1b65f16b8b5c749",
        10: "a5a4ea74ec9e4bf3",
        11: "ed3c49e5843d3070",
        12: "8733b7e053b48347",
    }


def _fulltext_index(name: str, label: str, *properties: str) -> IndexState:
    config = {"fulltext.analyzer": "english", "fulltext.eventually_consistent": False}
    return IndexState(
        name, "FULLTEXT", "ONLINE", 100.0, (label,), properties, {"indexConfig": config}
    )


def test_episode_content_searches_speakers_as_migration_13_builds_it() -> None:
    shape = INDEX_SHAPES["episode_content"]
    assert (shape.label, shape.properties, shape.filters) == (
        "Episode",
        ("content", "speaker"),
        ("ns",),
    )
    (statement, _) = MIGRATIONS[12].statements
    assert statement.startswith("DROP INDEX episode_content IF EXISTS;")
    assert "ON EACH [n.content, n.speaker, n.ns]" in statement
    current = _fulltext_index("episode_content", "Episode", "content", "speaker", "ns")
    check_shapes([current], range(1, 14))


@pytest.mark.parametrize("properties", [("content",), ("content", "ns")])
def test_an_earlier_episode_content_passes_until_migration_13_is_recorded(
    properties: tuple[str, ...],
) -> None:
    earlier = _fulltext_index("episode_content", "Episode", *properties)
    check_shapes([earlier], range(1, 13))  # migration 13 builds it again
    with pytest.raises(SchemaError, match="built differently") as caught:
        check_shapes([earlier], range(1, 14))
    assert "as before migration 13" in str(caught.value)
    assert ":Episode(content, speaker, ns)" in str(caught.value)
    other = _fulltext_index("episode_content", "Episode", "content", "title")
    with pytest.raises(SchemaError, match="for something else"):
        check_shapes([other], range(1, 13))


def test_an_index_under_another_name_clashes_with_what_graphmem_builds_now() -> None:
    def row(*properties: str) -> dict[str, object]:
        return {
            "name": "theirs",
            "type": "FULLTEXT",
            "labels": ["Episode"],
            "properties": list(properties),
            "constraint": None,
        }

    clashes = other_clashes(["episode_content"], [row("content", "speaker", "ns")])
    assert clashes == [
        "'theirs' (FULLTEXT) covers :Episode(content, speaker, ns), "
        "where graphmem's 'episode_content' belongs"
    ]
    # What migration 13 builds is another index than one on the content alone.
    assert other_clashes(["episode_content"], [row("content")]) == []


@pytest.mark.parametrize("dimension", [0, -3, 4097])
def test_impossible_dimensions_are_refused(dimension: int) -> None:
    with pytest.raises(SchemaError, match="dimension"):
        check_dimension(_Dim(dimension))


class _Dim:
    model_id = "x"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
