"""The text locks a write takes (pure plan logic, driven with scripted answers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from graphmem.core.forget.hashing import keyed_hash, namespace_key
from graphmem.core.plans import Run, Work
from graphmem.core.writes import fact_rows, fact_work
from graphmem.models import FactInput
from graphmem.store.cypher import query


def _guard(keys: Iterator[str | None]) -> Any:
    """The embedder check of a transaction, answering with the next of ``keys``."""

    def guard() -> Work[str | None]:
        yield Run(query("schema_state"), {})
        return next(keys)

    return guard


def test_a_key_made_while_the_write_waited_for_its_locks_is_read_again() -> None:
    """A graph without an erasure key gets one from its first erasure, which holds every text
    lock: a remember that read no key locks the keyless bucket, reads again, then hashes its
    texts with the new key and locks their buckets."""
    inputs = [FactInput(text="The code is 1234.")]
    rows = fact_rows("ns", inputs, np.ones((1, 384), dtype=np.float32), None)
    work = fact_work("ns", inputs, rows, "api", _guard(iter([None, "k" * 64])))()
    locked: list[list[str]] = []
    step = next(work)
    answers: dict[str, Any] = {"schema_state": [{}], "text_locks": []}
    while step.query.name != "fact_create":
        if step.query.name == "text_locks":
            locked.append(step.params["buckets"])
        step = work.send(answers[step.query.name])
    expected = keyed_hash(namespace_key("k" * 64, "ns"), "The code is 1234.")
    assert rows[0]["erasure_hash"] == expected
    assert locked == [["none"], [expected[:2]]]
