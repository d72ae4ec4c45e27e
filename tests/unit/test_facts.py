from __future__ import annotations

import hashlib

import numpy as np
import pytest

from graphmem.facts import new_fact_rows, text_hash


def test_rows_carry_fresh_ids_hashes_and_plain_vectors() -> None:
    vectors = np.eye(2, dtype=np.float32)
    rows = new_fact_rows("ns1", ["a", "a"], vectors, source="s", tags=("x",))
    assert rows[0]["id"] != rows[1]["id"]  # append-only: the same text twice is two facts
    assert rows[0]["text_hash"] == rows[1]["text_hash"] == hashlib.sha256(b"a").hexdigest()
    assert rows[0]["embedding"] == [1.0, 0.0]
    assert rows[0]["tags"] == ["x"]
    assert {r["ns"] for r in rows} == {"ns1"}
    assert text_hash("é") == hashlib.sha256("é".encode()).hexdigest()


def test_texts_and_vectors_must_pair_up() -> None:
    with pytest.raises(ValueError, match="2 texts but 1 vectors"):
        new_fact_rows("ns1", ["a", "b"], np.ones((1, 3), dtype=np.float32))
