"""The memory clients for behavioural tests: every test using ``memory`` runs twice, once
through :class:`Memory` and once through :class:`AsyncMemory`, with the same assertions."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from graphmem.client import AsyncMemory, Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from graphmem.testing.llm_stub import StubLLMServer
from tests.history import History, build_history, stub_answers
from tests.history import llm_settings as history_settings
from tests.service import Served, serve_process


class Client:
    """Calls the sync client directly, or runs the async client's coroutines on one loop."""

    def __init__(self, client: Memory | AsyncMemory, loop: asyncio.AbstractEventLoop | None):
        self.raw = client
        self.loop = loop
        self.kind = "async" if loop is not None else "sync"

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.raw, name)
        if name == "audit" and self.loop is not None:
            return Client(attr, self.loop)  # memory.audit's methods, run on the same loop
        if self.loop is None or not callable(attr):
            return attr
        loop = self.loop

        def call(*args: Any, **kwargs: Any) -> Any:
            return loop.run_until_complete(attr(*args, **kwargs))

        return call


def make_client(
    kind: str,
    *,
    settings: GraphmemSettings,
    graph: Graph,
    embedder: Embedder,
    **options: Any,
) -> Client:
    if kind == "sync":
        return Client(
            Memory(settings, target=graph.target, embedder=embedder, **options).connect(), None
        )
    loop = asyncio.new_event_loop()
    client = AsyncMemory(settings, target=graph.target, embedder=embedder, **options)
    loop.run_until_complete(client.connect())
    return Client(client, loop)


def close_client(client: Client) -> None:
    if client.loop is None:
        client.raw.close()
        return
    client.loop.run_until_complete(client.raw.close())  # type: ignore[arg-type]
    client.loop.close()


@pytest.fixture(params=["sync", "async"])
def memory(
    request: pytest.FixtureRequest,
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    ns: str,
) -> Iterator[Client]:
    """A connected client (sync or async) whose default namespace is this test's own."""
    client = make_client(
        request.param, settings=test_settings, graph=graph, embedder=embedder, ns=ns
    )
    yield client
    close_client(client)


@pytest.fixture
def client_factory(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder
) -> Iterator[Callable[..., Client]]:
    """Builds more clients (closed at the end), for tests that need other options."""
    made: list[Client] = []

    def build(
        kind: str,
        *,
        settings: GraphmemSettings | None = None,
        embedder: Embedder = embedder,
        **options: Any,
    ) -> Client:
        """A client of ``kind`` with the test settings and embedder, unless given others."""
        client = make_client(
            kind, settings=settings or test_settings, graph=graph, embedder=embedder, **options
        )
        made.append(client)
        return client

    yield build
    for client in made:
        close_client(client)


@pytest.fixture(scope="module")
def history(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> History:
    """The scripted history of :mod:`tests.history`, written once per module into a namespace
    of its own (its LLM a stub server that replays the script's answers)."""
    ns = f"history-{uuid.uuid4().hex[:12]}"
    with StubLLMServer(stub_answers) as stub:
        client = make_client(
            "sync", settings=history_settings(test_settings, stub), graph=graph, embedder=embedder
        )
        try:
            built = build_history(client, ns)
        finally:
            close_client(client)
    return built


@pytest.fixture(scope="session")
def served(graph: Graph) -> Iterator[Served]:
    """A `graphmem serve` process on the test graph (the default limits), one for the session
    (a start is seconds on a busy machine): it caches no key (``--key-cache 0``), its service
    secret is a file that outlives a wipe of the graph, and each test makes its own keys in its
    own namespace. A module that needs other options or stops its server starts its own."""
    with serve_process(graph) as running:
        yield running


@pytest.fixture
def admin(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> Iterator[Memory]:
    """A library client on the test graph, for making keys and looking at the graph."""
    with Memory(test_settings, target=graph.target, embedder=embedder) as memory:
        yield memory
