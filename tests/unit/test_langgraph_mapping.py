"""The LangGraph store's mapping, without a database: every namespace tuple LangGraph accepts
becomes a valid graphmem namespace and comes back the same, and filters match the values as
LangGraph's own in-memory store matches them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from graphmem.integrations.langgraph import _passes, graphmem_namespace, langgraph_namespace
from graphmem.models import check_namespace

labels = st.text(min_size=1, max_size=8).filter(lambda s: "." not in s and "\x00" not in s)


@given(st.lists(labels, min_size=1, max_size=4).map(tuple))
def test_a_namespace_maps_to_a_graphmem_one_and_back(namespace: tuple[str, ...]) -> None:
    escaped = sum(
        1 if c.isascii() and (c.isalnum() or c in "_@-") else 3 * len(c.encode())
        for label in namespace
        for c in label
    )
    if len("langgraph") + len(namespace) + escaped > 128:
        with pytest.raises(ValueError, match="at most 128"):
            graphmem_namespace("langgraph", namespace)
        return
    name = graphmem_namespace("langgraph", namespace)
    assert check_namespace(name) == name
    assert langgraph_namespace("langgraph", name) == namespace
    assert langgraph_namespace("other", name) is None


VALUE = {"kind": "work", "n": 3, "tags": ["a", "b"], "who": {"name": "Ann", "age": 40}}


@pytest.mark.parametrize(
    "wanted",
    [
        {"kind": "work"},
        {"kind": "home"},
        {"n": {"$gt": 2}},
        {"n": {"$gte": 4}},
        {"n": {"$lt": 4, "$ne": 3}},
        {"n": {"$eq": 3}, "kind": "work"},
        {"tags": ["a", "b"]},
        {"tags": ["a"]},
        {"who": {"name": "Ann"}},
        {"who": {"age": {"$lte": 40}}},
        {"missing": {"$ne": 1}},
        {"missing": None},
    ],
)
def test_filters_match_as_langgraphs_own_store(wanted: dict[str, Any]) -> None:
    store = InMemoryStore()
    store.put(("x",), "k", VALUE)
    assert _passes(wanted, VALUE) == bool(store.search(("x",), filter=wanted))
