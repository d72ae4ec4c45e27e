from __future__ import annotations

import pytest

from graphmem.errors import SchemaError
from graphmem.store.indexes import MIGRATIONS, VECTOR_INDEXES
from graphmem.store.schema import check_dimension


def test_migrations_are_numbered_in_order_and_create_distinct_names() -> None:
    versions = [m.version for m in MIGRATIONS]
    assert versions == list(range(1, len(MIGRATIONS) + 1))
    # Migrations that build earlier indexes again drop them first.
    rebuilds = [m for m in MIGRATIONS if all(s.startswith("DROP INDEX") for s in m.statements)]
    assert [m.version for m in rebuilds] == [9, 10]
    names = [name for m in MIGRATIONS if m not in rebuilds for name in m.creates]
    assert len(names) == len(set(names))
    assert {n for m in rebuilds for n in m.creates} <= set(names)
    for migration in MIGRATIONS:
        assert len(migration.statements) == len(migration.creates)
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


@pytest.mark.parametrize("dimension", [0, -3, 4097])
def test_impossible_dimensions_are_refused(dimension: int) -> None:
    with pytest.raises(SchemaError, match="dimension"):
        check_dimension(_Dim(dimension))


class _Dim:
    model_id = "x"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
