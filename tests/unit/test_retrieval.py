"""Recall's read plan, driven by hand: which statements it runs for which answers."""

from __future__ import annotations

import re
import time
from collections.abc import Generator
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from graphmem.core.memory_core import MemoryCore
from graphmem.core.plans import Embed, LoadModel, Run, Transaction
from graphmem.core.recall.ranking import RecallConfig
from graphmem.core.recall.scope import RecallRequest, RecallScope
from graphmem.core.recall.search import DETAIL_READS, RecallReads, recall_reads
from graphmem.errors import InvalidInputError


def _search_row() -> dict[str, Any]:
    """recall_search's row: one fact, found by an unfiltered read of the vector index only,
    which ran out."""
    return {
        "schema_state": None,
        "fact_path": "unfiltered",
        "episode_path": None,
        "fact_briefs": [
            {"id": "a", "text": "The user's favourite colour is blue.", "at": 0, "similarity": 0.9}
        ],
        "episode_briefs": [],
        "fv_hits": [{"id": "a", "score": 0.9, "head": None, "head_at": None}],
        "fv_fetched": 1,
        "ff_hits": [],
        "ff_fetched": 0,
        "fact_nodes": 1,
        "episode_nodes": 0,
    }


def _detail(fact_id: str) -> dict[str, Any]:
    return {"id": fact_id, "fact": {"id": fact_id}, "references": [], "provenance": []}


def _plan(config: RecallConfig) -> Generator[Run, Any, RecallReads]:
    """recall_reads for k=5 facts about a favourite colour, with ``config``."""
    request = RecallRequest(RecallScope(kinds=("fact",)), 5, True, config, track_access=True)
    return recall_reads(
        "ns",
        "favourite colour",
        [0.1] * 384,
        request,
        datetime.now(UTC),
        check_state=lambda state: None,
    )


def _drive(details: list[list[dict[str, Any]]]) -> tuple[RecallReads, list[list[str]]]:
    """Runs the plan, answering the search with one fact and each details read with the next
    of ``details`` (its facts); returns the reads and the fact ids each details read asked for."""
    plan = _plan(RecallConfig())
    run: Run = next(plan)
    assert run.query.name == "recall_search"
    answer: list[dict[str, Any]] = [_search_row()]
    asked = []
    try:
        while True:
            run = plan.send(answer)
            assert run.query.name == "recall_details"
            asked.append(run.params["fact_ids"])
            answer = [{"facts": details[len(asked) - 1], "episodes": []}]
    except StopIteration as stop:
        return stop.value, asked


def test_details_are_read_once_when_every_fact_comes_back() -> None:
    reads, asked = _drive([[_detail("a")]])
    assert asked == [["a"]] and set(reads.facts) == {"a"}


def test_a_fact_that_comes_back_without_details_is_read_again() -> None:
    # A fact replaced while the statement walked its chain can come back with nothing.
    reads, asked = _drive([[], [_detail("a")]])
    assert asked == [["a"], ["a"]] and set(reads.facts) == {"a"}


def test_a_fact_gone_for_good_is_given_up_after_a_few_reads() -> None:
    reads, asked = _drive([[]] * DETAIL_READS)
    assert asked == [["a"]] * DETAIL_READS and reads.facts == {}


def test_a_vector_index_that_returns_fewer_than_it_holds_is_not_taken_as_run_out() -> None:
    # The approximate search returned one entry of the 5,000 the index holds, though asked
    # for more: the list is widened, then scored exactly, as when it returns all it was asked.
    plan = _plan(RecallConfig(retrievers=("vector",)))
    names = [next(plan).query.name]
    row = {**_search_row(), "fact_nodes": 5000}
    names.append(plan.send([row]).query.name)
    names.append(plan.send([row]).query.name)
    assert names == ["recall_search", "recall_search", "recall_fact_exact"]


def test_recall_times_leave_the_model_loading_out() -> None:
    # The first recall of a client loads a lazy model: neither its embedding time nor its
    # total may count that.
    core = MemoryCore(dimension=384, default_ns="ns")
    plan = core.recall("favourite colour", ns=None)
    step = next(plan)
    assert isinstance(step, LoadModel)
    time.sleep(0.3)  # the loading
    step = plan.send(None)
    assert isinstance(step, Embed)
    step = plan.send(np.ones((1, 384), dtype=np.float32) / np.sqrt(384))
    assert isinstance(step, Transaction) and step.mode == "read"
    try:
        plan.send(RecallReads(candidates=[]))
    except StopIteration as stop:
        result = stop.value
    assert result.hits == () and result.timing.total_ms < 300


def test_context_names_every_option_it_takes_when_given_an_unknown_one() -> None:
    # The refusal lists what context takes, its own timezone included, so that a caller can
    # correct the call from the message alone.
    core = MemoryCore(dimension=384, default_ns="ns")
    plan = core.context("q", ns=None, budget_tokens=100, counter=CharCounter(), bogus=1)
    with pytest.raises(
        InvalidInputError,
        match=r"budget_tokens, k, pinned_limit, timezone, short_ids and include_cold,",
    ):
        next(plan)


class CharCounter:
    name = "chars"

    def count(self, text: str) -> int:
        return len(text)


def test_recall_names_its_options_when_given_an_unknown_one() -> None:
    core = MemoryCore(dimension=384, default_ns="ns")
    plan = core.recall("q", ns=None, kind="fact")  # kinds= was meant
    with pytest.raises(InvalidInputError, match=r"recall got unknown options \['kind'\].*kinds"):
        next(plan)


def test_every_recall_option_has_its_scope_or_request_field_and_cli_flags_name_options() -> None:
    # RecallOptions is the one list: the CLI's filter flags and the checked request follow it.
    from graphmem.cli.filters import FILTER_OPTIONS
    from graphmem.core.recall.scope import RECALL_OPTIONS, RecallScope

    assert {spec.option for spec in FILTER_OPTIONS} <= RECALL_OPTIONS
    scope_fields = set(RecallScope.__dataclass_fields__)
    assert scope_fields <= RECALL_OPTIONS
    assert RECALL_OPTIONS - scope_fields == {
        "k",
        "expand_references",
        "min_score",
        "config",
        "track_access",
    }


def test_speakers_restrict_recall_to_episodes_and_reach_every_episode_filter() -> None:
    from graphmem.store.cypher import query

    scope = RecallScope.checked({"speakers": ["Alice", "Bob", "Alice"]})
    assert scope.kinds == ("episode",) and scope.speakers == ("Alice", "Bob")
    assert RecallScope.checked({"speakers": "Alice"}).speakers == ("Alice",)
    assert RecallScope.checked({}).params()["speakers"] is None
    # Each statement gets exactly the parameters its header names (checked when it runs).
    assert scope.params()["speakers"] == ["Alice", "Bob"] and "speakers" not in scope.fact_params()
    query("recall_episode_exact").check_params(
        {"ns": "n", "vector": [], "pool": 1, **scope.params()}
    )
    query("recall_fact_exact").check_params(
        {"ns": "n", "vector": [], "pool": 1, "keep_superseded": False, **scope.fact_params()}
    )
    search = {**scope.search_params(), "schema_key": "k"}
    for name in ("recall_search", "recall_search_filtered"):
        assert "speakers" in query(name).params and set(search) <= set(query(name).params)
    for options, words in (
        ({"speakers": []}, "speakers=[] would match no message"),
        ({"speakers": ["Alice"], "kinds": ["fact"]}, "kinds asks for facts only"),
        ({"speakers": ["Alice"], "tags": ["work"]}, "but tags filter facts"),
        ({"speakers": ["\u200b "]}, "invalid speakers"),
        ({"speakers": [7]}, "invalid speakers"),
        ({"speakers": {"name": "Alice"}}, "speakers takes a list of names"),
        ({"speakers": ["x" * 257]}, "the maximum is 256"),
        ({"speakers": [f"p{i}" for i in range(101)]}, "at most 100 names, got 101"),
    ):
        with pytest.raises(InvalidInputError, match=re.escape(words)):
            RecallScope.checked(options)
