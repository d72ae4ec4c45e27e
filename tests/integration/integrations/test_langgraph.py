"""LangGraph's store contract on graphmem (put, get, search, delete, list_namespaces, through
the sync and the async client), a compiled graph that writes and reads memory through the
store, and the same store through ``graphmem serve``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.errors import ClientUsageError
from graphmem.integrations.langgraph import GraphmemStore, graphmem_namespace
from graphmem.remote import RemoteMemory
from tests.helpers import cli_env
from tests.integration.conftest import Client
from tests.service import Served, new_key

pytestmark = pytest.mark.integration

USER = ("memories", "u-1")


def _calls(memory: Client, store: GraphmemStore) -> Callable[..., Any]:
    """The store's sync methods with a sync client, its async ones (on the client's loop)
    with an async client."""
    loop = memory.loop
    if loop is None:
        return lambda name, *args, **kwargs: getattr(store, name)(*args, **kwargs)
    return lambda name, *args, **kwargs: loop.run_until_complete(
        getattr(store, "a" + name)(*args, **kwargs)
    )


def test_put_get_supersede_and_delete(memory: Client, graph: Graph, ns: str) -> None:
    store = GraphmemStore(memory.raw, prefix=ns, fields=["text"])
    call = _calls(memory, store)
    assert call("get", USER, "food") is None
    call("put", USER, "food", {"text": "The user likes pizza", "kind": "preference"})
    first = call("get", USER, "food")
    assert first.value == {"text": "The user likes pizza", "kind": "preference"}
    assert (first.namespace, first.key) == (USER, "food")
    assert first.created_at == first.updated_at

    call("put", USER, "food", {"text": "The user likes sushi now", "kind": "preference"})
    second = call("get", USER, "food")
    assert second.value["text"] == "The user likes sushi now"
    assert second.created_at == first.created_at < second.updated_at

    # The put superseded the first value: both versions and the edge stay, by the adapter.
    gns = graphmem_namespace(ns, USER)
    head = memory.recall("sushi", ns=gns, kinds=["fact"]).hits[0].fact
    history = memory.history(head.id, ns=gns)
    assert [f.text for f in history.facts] == ["The user likes pizza", "The user likes sushi now"]
    assert [f.status for f in history.facts] == ["superseded", "active"]
    assert [(e.actor, e.reason) for e in history.edges] == [
        ("langgraph", "new value for key 'food' (LangGraph put)")
    ]

    if memory.loop is None:  # the command line shows the same chain, by the same actor
        done = subprocess.run(
            [sys.executable, "-m", "graphmem", "history", head.id, "--json"],
            env={**os.environ, **cli_env(graph, gns)},
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        assert [e["actor"] for e in json.loads(done.stdout)["edges"]] == ["langgraph"]

    call("delete", USER, "food")
    assert call("get", USER, "food") is None
    assert call("search", USER, query="sushi") == []
    assert memory.get(head.id, ns=gns).status == "retracted"
    # A put after a delete starts the key afresh.
    call("put", USER, "food", {"text": "The user likes ramen"})
    third = call("get", USER, "food")
    assert third.value == {"text": "The user likes ramen"}
    assert third.created_at > second.updated_at


def test_search_is_recall_with_the_filter_on_the_values(memory: Client, ns: str) -> None:
    store = GraphmemStore(memory.raw, prefix=ns, fields=["text"])
    call = _calls(memory, store)
    call("put", USER, "food", {"text": "The user likes sushi", "kind": "preference"})
    call("put", USER, "job", {"text": "The user works at Microsoft", "kind": "fact", "n": 3})
    call("put", ("memories", "u-2"), "job", {"text": "Another user works at Google", "n": 7})

    found = call("search", ("memories",), query="where does the user work?")
    assert {(i.namespace, i.key) for i in found} >= {(USER, "job"), (("memories", "u-2"), "job")}
    gns = graphmem_namespace(ns, USER)
    recalled = memory.recall("where does the user work?", ns=gns, kinds=["fact"], k=100)
    scores = {h.text: h.score for h in recalled.hits}
    for item in found:
        assert item.score is not None
        if item.namespace == USER:
            assert item.score == pytest.approx(scores[item.value["text"]])
    assert found == sorted(found, key=lambda i: -(i.score or 0))

    only_facts = call("search", ("memories",), query="user", filter={"kind": "fact"})
    assert [(i.namespace, i.key) for i in only_facts] == [(USER, "job")]
    assert {i.key for i in call("search", ("memories",), filter={"n": {"$gte": 3}})} == {"job"}
    assert len(call("search", ("memories",), filter={"n": {"$gt": 3}})) == 1
    listed = call("search", USER)
    assert [i.key for i in listed] == ["job", "food"]  # newest first without a query
    assert all(i.score is None for i in listed)
    assert [i.key for i in call("search", USER, limit=1, offset=1)] == ["food"]
    assert call("search", ("elsewhere",)) == []


def test_get_finds_its_key_among_many_unrelated_facts(
    client_factory: Callable[..., Client], ns: str
) -> None:
    # The async methods make the same calls as the sync ones (other tests run both).
    memory = client_factory("sync", ns=ns)
    store = GraphmemStore(memory.raw, prefix=ns, fields=["text"])
    gns = graphmem_namespace(ns, USER)
    memory.remember_many([f"Note {i}: the user mentioned topic {i}" for i in range(300)], ns=gns)
    call = _calls(memory, store)
    call("put", USER, "zz-top", {"text": "The user's favourite band plays blues rock"})
    item = call("get", USER, "zz-top")
    assert item is not None and item.value["text"].endswith("blues rock")
    assert call("get", USER, "Note 1") is None  # a fact without the key's tag is no item
    assert [i.key for i in call("search", USER, query="favourite band")] == ["zz-top"]


class _Racing:
    """A sync client through which another writer replaces a key's value just before the
    store's own supersession of it lands, once."""

    def __init__(self, memory: Memory, rival: GraphmemStore) -> None:
        self.memory, self.rival, self.raced = memory, rival, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.memory, name)

    def remember(self, text: str, **fields: Any) -> Any:
        if fields.get("supersedes") and not self.raced:
            self.raced = True
            self.rival.put(USER, "job", {"text": "The user works at a rival's guess"})
        return self.memory.remember(text, **fields)


def test_a_put_that_loses_a_race_supersedes_the_winner(
    client_factory: Callable[..., Client], ns: str
) -> None:
    memory = client_factory("sync", ns=ns).raw
    assert isinstance(memory, Memory)
    plain = GraphmemStore(memory, prefix=ns, fields=["text"])
    plain.put(USER, "job", {"text": "The user works at Google"})
    racing = GraphmemStore(_Racing(memory, plain), prefix=ns, fields=["text"])  # type: ignore[arg-type]
    racing.put(USER, "job", {"text": "The user works at Microsoft"})
    item = plain.get(USER, "job")
    assert item is not None and item.value == {"text": "The user works at Microsoft"}
    gns = graphmem_namespace(ns, USER)
    head = memory.recall("Microsoft", ns=gns).hits[0]
    assert [f.text for f in memory.history(head.id, ns=gns).facts] == [
        "The user works at Google",
        "The user works at a rival's guess",
        "The user works at Microsoft",
    ]


def test_list_namespaces(memory: Client, ns: str) -> None:
    store = GraphmemStore(memory.raw, prefix=ns)
    call = _calls(memory, store)
    odd = ("notes", "a b/é:1")
    for namespace in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "c", "f"), odd]:
        call("put", namespace, "k", {"text": "x"})
    assert call("list_namespaces") == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "c", "f"),
        odd,
    ]
    assert call("list_namespaces", prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
    ]
    assert call("list_namespaces", suffix=("f",)) == [("a", "c", "f")]
    assert call("list_namespaces", prefix=("a", "*", "c")) == [("a", "b", "c")]
    assert call("list_namespaces", max_depth=1) == [("a",), ("notes",)]
    assert call("list_namespaces", limit=1, offset=1) == [("a", "b", "d", "e")]
    assert call("get", odd, "k").namespace == odd
    # A namespace whose items were all deleted is no longer listed.
    call("delete", ("a", "c", "f"), "k")
    assert ("a", "c", "f") not in call("list_namespaces")


def test_erase_removes_every_version_for_good(memory: Client, ns: str) -> None:
    store = GraphmemStore(memory.raw, prefix=ns, fields=["text"])
    call = _calls(memory, store)
    call("put", USER, "secret", {"text": "The user's door code is 4711"})
    call("put", USER, "secret", {"text": "The user's door code is 9000"})
    call("delete", USER, "secret")
    assert call("erase", USER, "secret", reason="user request") == 2
    gns = graphmem_namespace(ns, USER)
    assert memory.recall("door code", ns=gns, include_retired=True).hits == ()
    assert memory.stats(ns=gns).forgotten_facts == 2


def test_bad_input_is_refused(memory: Client, ns: str) -> None:
    store = GraphmemStore(memory.raw, prefix=ns)
    call = _calls(memory, store)
    with pytest.raises(InvalidNamespaceError, match="periods"):
        call("put", ("a.b",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError, match="at most 128"):
        call("put", ("x" * 130,), "k", {"text": "x"})
    with pytest.raises(NotImplementedError, match="TTL"):
        call("put", USER, "k", {"text": "x"}, ttl=5)
    with pytest.raises(InvalidNamespaceError, match="prefix"):
        GraphmemStore(memory.raw, prefix="a.b")


def test_a_sync_client_serves_the_async_methods_and_an_async_one_only_those(
    client_factory: Callable[..., Client], ns: str
) -> None:
    sync_store = GraphmemStore(client_factory("sync", ns=ns).raw, prefix=ns)
    asyncio.run(sync_store.aput(USER, "k", {"text": "The user likes tea"}))
    item = asyncio.run(sync_store.aget(USER, "k"))
    assert item is not None and item.value == {"text": "The user likes tea"}
    async_client = client_factory("async", ns=ns)
    with pytest.raises(ClientUsageError, match="async client"):
        GraphmemStore(async_client.raw, prefix=ns).get(USER, "k")


class _State(TypedDict):
    user: str
    said: str
    recalled: list[str]


def _graph(store: BaseStore, *, use_async: bool) -> Any:
    """A graph whose first node stores what the user said and whose second recalls it."""

    def remember(state: _State, *, store: BaseStore) -> dict[str, Any]:
        store.put(("memories", state["user"]), "latest", {"text": state["said"]})
        return {}

    def recall(state: _State, *, store: BaseStore) -> dict[str, Any]:
        found = store.search(("memories", state["user"]), query="what does the user like?")
        return {"recalled": [item.value["text"] for item in found]}

    async def aremember(state: _State, *, store: BaseStore) -> dict[str, Any]:
        await store.aput(("memories", state["user"]), "latest", {"text": state["said"]})
        return {}

    async def arecall(state: _State, *, store: BaseStore) -> dict[str, Any]:
        found = await store.asearch(("memories", state["user"]), query="what does the user like?")
        return {"recalled": [item.value["text"] for item in found]}

    builder = StateGraph(_State)
    builder.add_node("remember", aremember if use_async else remember)
    builder.add_node("recall", arecall if use_async else recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def test_a_compiled_graph_keeps_its_long_term_memory_in_graphmem(memory: Client, ns: str) -> None:
    store = GraphmemStore(memory.raw, prefix=ns, fields=["text"])
    graph = _graph(store, use_async=memory.loop is not None)
    state = {"user": "u-9", "said": "The user likes green tea", "recalled": []}
    if memory.loop is None:
        out = graph.invoke(state)
        again = graph.invoke({**state, "said": "The user likes black coffee"})
    else:
        out = memory.loop.run_until_complete(graph.ainvoke(state))
        again = memory.loop.run_until_complete(
            graph.ainvoke({**state, "said": "The user likes black coffee"})
        )
    assert out["recalled"] == ["The user likes green tea"]
    assert again["recalled"] == ["The user likes black coffee"]  # the old value superseded
    head = memory.history(
        memory.recall("coffee", ns=graphmem_namespace(ns, ("memories", "u-9"))).hits[0].id,
        ns=graphmem_namespace(ns, ("memories", "u-9")),
    )
    assert len(head.facts) == 2 and head.edges[0].actor == "langgraph"


def test_the_store_through_graphmem_serve(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    key = new_key(admin, "write", prefix=ns)
    with RemoteMemory(served.url, key.key) as remote:
        store = GraphmemStore(remote, prefix=ns, fields=["text"])
        store.put(USER, "job", {"text": "The user works at Google"})
        store.put(USER, "job", {"text": "The user works at Microsoft"})
        item = store.get(USER, "job")
        assert item is not None and item.value == {"text": "The user works at Microsoft"}
        assert store.list_namespaces() == [USER]
        hits = store.search(("memories",), query="employer of the user")
        assert [h.value["text"] for h in hits] == ["The user works at Microsoft"]
        fact_id = remote.recall("Microsoft", ns=graphmem_namespace(ns, USER)).hits[0].id
    # The supersession is in `graphmem history`, by the API key's name.
    done = subprocess.run(
        [sys.executable, "-m", "graphmem", "history", fact_id, "--json"],
        env={**os.environ, **cli_env(graph, graphmem_namespace(ns, USER))},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    history = json.loads(done.stdout)
    assert [e["actor"] for e in history["edges"]] == [key.api_key.name]
