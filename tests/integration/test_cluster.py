"""graphmem ready for a cluster, on one real server: the routing driver (``neo4j://``) for the
library clients and for ``graphmem serve``, and read-your-writes across two serve processes
through the ``Graphmem-Bookmark`` header (REST, MCP and the remote clients).

One Community server answers routing requests as a cluster of one, so what these tests show
is the plumbing: the bookmark a write's answer carries is the database's, another process
that is sent it hands it to Neo4j (a bookmark of a later transaction than the database has
makes its read wait, then fail with a timeout; one that is not the database's is refused),
and every flow works through a routing URI. That a follower waits for the write is Neo4j's
part, which a single server cannot show.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from graphmem.client import AsyncMemory, Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.models.bookmarks import HEADER, decode, encode
from graphmem.models.keys import NewKey
from graphmem.remote import AsyncRemoteMemory, RemoteMemory
from graphmem.settings import GraphmemSettings
from tests.integration.conftest import Client, close_client
from tests.service import Served, bearer, new_key, serve_process

post = functools.partial(httpx.post, timeout=120)
get = functools.partial(httpx.get, timeout=120)
#: Seconds process B lets a read run (its --timeout): what a read waiting for a bookmark the
#: database never reaches is answered within (the first search after a write can take a few
#: seconds on a loaded machine).
B_TIMEOUT = 20


def routed(uri: str) -> str:
    """The test server's URI with the routing scheme (``bolt://`` → ``neo4j://``)."""
    scheme, rest = uri.split("://", 1)
    return f"{scheme.replace('bolt', 'neo4j')}://{rest}"


def future(token: str) -> str:
    """A well-formed bookmark of a transaction the database has not reached: each value's
    transaction number raised far ahead. Neo4j's bookmark is ``FB:`` and base64 of PackStream:
    a list holding the database's 16-byte id, then the transaction number, then a list."""
    values = []
    for value in decode(token):
        assert value.startswith("FB:"), f"a bookmark of another layout: {value!r}"
        raw = base64.b64decode(value[3:])
        assert raw[:3] == b"\x91\xcc\x10", f"a bookmark of another layout: {value!r}"
        width = {0xC8: 1, 0xC9: 2, 0xCA: 4, 0xCB: 8}.get(raw[19], 0)  # else a tiny int
        ahead = b"\xcb" + (2**40).to_bytes(8, "big")
        values.append("FB:" + base64.b64encode(raw[:19] + ahead + raw[20 + width :]).decode())
    return encode(values)


# --- the library clients over the routing driver ---------------------------------------------
@pytest.fixture(params=["sync", "async"])
def routed_memory(
    request: pytest.FixtureRequest,
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    ns: str,
) -> Iterator[Client]:
    """A connected client (sync or async) to the test graph through a ``neo4j://`` URI."""
    target = replace(graph.target, uri=routed(graph.target.uri))
    if request.param == "sync":
        client = Client(
            Memory(test_settings, target=target, embedder=embedder, ns=ns).connect(), None
        )
    else:
        loop = asyncio.new_event_loop()
        aio = AsyncMemory(test_settings, target=target, embedder=embedder, ns=ns)
        client = Client(loop.run_until_complete(aio.connect()), loop)
    try:
        yield client
    finally:
        close_client(client)


def test_the_library_clients_work_through_a_routing_uri(routed_memory: Client, ns: str) -> None:
    memory = routed_memory
    assert memory.graph.target.uri.startswith("neo4j")
    first = memory.remember("Ada works at Acme.")
    second = memory.remember("Ada moved to Globex.", supersedes=[first.id])
    hits = memory.recall("Where does Ada work?", track_access=False).hits
    assert [h.id for h in hits][:1] == [second.id]
    assert [f.id for f in memory.history(second.id).facts] == [first.id, second.id]
    rows = memory.graph.execute("MATCH (f:Fact {ns: $ns}) RETURN count(f) AS n", ns=ns)
    if memory.loop is not None:
        rows = memory.loop.run_until_complete(rows)
    assert rows[0]["n"] == 2  # the guarded read, routed as a read
    done = memory.forget([first.id, second.id], reason="test")
    assert set(done.facts) == {first.id, second.id}
    assert memory.recall("Ada", track_access=False).hits == ()


# --- two serve processes ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def routed_env(graph: Graph) -> dict[str, str]:
    return {"GRAPHMEM_NEO4J_URI": routed(graph.target.uri)}


@pytest.fixture(scope="module")
def served_a(graph: Graph, routed_env: dict[str, str]) -> Iterator[Served]:
    with serve_process(graph, env=routed_env) as running:
        yield running


@pytest.fixture(scope="module")
def served_b(graph: Graph, routed_env: dict[str, str]) -> Iterator[Served]:
    with serve_process(graph, "--timeout", str(B_TIMEOUT), env=routed_env) as running:
        yield running


@pytest.fixture
def writer(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str) -> NewKey:
    with Memory(test_settings, target=graph.target, embedder=embedder) as admin:
        return new_key(admin, "write", namespaces=[ns])


def _hits(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [h["text"] for h in response.json()["hits"]]


def test_a_write_through_one_process_is_read_through_another_with_its_bookmark(
    served_a: Served, served_b: Served, writer: NewKey, ns: str
) -> None:
    """The whole flow over a neo4j:// URI: remember on A, recall, history and audit on B
    with A's bookmark, forget on B, recall on A with the forget's bookmark."""
    base = f"/v1/namespaces/{ns}"
    key = bearer(writer)
    made = post(f"{served_a.url}{base}/facts", json={"text": "Ada works at Acme."}, headers=key)
    assert made.status_code == 201, made.text
    mark = made.headers[HEADER]
    assert all(v.startswith("FB:") for v in decode(mark))  # the database's own bookmark
    fact = made.json()["id"]
    follow = {**key, HEADER: mark}
    seen = get(f"{served_b.url}{base}/memories/{fact}", headers=follow)
    assert seen.status_code == 200 and seen.json()["text"] == "Ada works at Acme."

    search = {"query": "Where does Ada work?", "track_access": False}
    assert _hits(post(f"{served_b.url}{base}/search", json=search, headers=follow)) == [
        "Ada works at Acme."
    ]
    history = get(f"{served_b.url}{base}/facts/{fact}/history", headers=follow)
    assert history.status_code == 200 and HEADER not in history.headers  # a read: none
    timeline = get(f"{served_b.url}{base}/audit/timeline/{fact}", headers=follow)
    assert timeline.status_code == 200, timeline.text

    erase = {"reason": "asked to", "ids": [fact], "confirm": True}
    gone = post(f"{served_b.url}{base}/forget", json=erase, headers=follow)
    assert gone.status_code == 200, gone.text
    after = gone.headers[HEADER]
    assert after != mark
    follow_forget = {**key, HEADER: after}
    assert _hits(post(f"{served_a.url}{base}/search", json=search, headers=follow_forget)) == []


def test_a_bookmark_the_database_has_not_reached_makes_the_read_wait_and_time_out(
    served_a: Served, served_b: Served, writer: NewKey, ns: str
) -> None:
    base = f"/v1/namespaces/{ns}"
    key = bearer(writer)
    made = post(f"{served_a.url}{base}/facts", json={"text": "Bo likes tea."}, headers=key)
    ahead = {**key, HEADER: future(made.headers[HEADER])}
    search = {"query": "Bo", "track_access": False}
    started = time.monotonic()
    waited = post(f"{served_b.url}{base}/search", json=search, headers=ahead)
    took = time.monotonic() - started
    assert waited.status_code == 504, waited.text
    assert waited.json()["error"]["type"] == "TransactionTimeoutError"
    assert took >= B_TIMEOUT - 1  # it waited for the bookmark, until the request's limit
    # Without the bookmark, the same read answers at once.
    assert _hits(post(f"{served_b.url}{base}/search", json=search, headers=key)) == [
        "Bo likes tea."
    ]


def test_a_bookmark_that_is_not_the_databases_or_not_a_bookmark_changes_nothing(
    served_b: Served, writer: NewKey, ns: str
) -> None:
    url = f"{served_b.url}/v1/namespaces/{ns}/facts"
    key = bearer(writer)
    for value in (encode(["FB:bm90IGEgYm9va21hcmsK"]), "not a bookmark!"):
        refused = post(url, json={"text": "Cy likes jam."}, headers={**key, HEADER: value})
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["type"] == "InvalidInputError"
        assert HEADER in refused.json()["error"]["message"]
    search = {"query": "Cy", "track_access": False}
    url = f"{served_b.url}/v1/namespaces/{ns}/search"
    assert _hits(post(url, json=search, headers=key)) == []


def test_a_write_answered_again_from_its_record_carries_a_bookmark_too(
    served_a: Served, served_b: Served, writer: NewKey, ns: str
) -> None:
    headers = {**bearer(writer), "Idempotency-Key": f"cluster-{ns}"}
    path = f"/v1/namespaces/{ns}/facts"
    first = post(f"{served_a.url}{path}", json={"text": "Fay keeps bees."}, headers=headers)
    again = post(f"{served_b.url}{path}", json={"text": "Fay keeps bees."}, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.headers["Idempotency-Replayed"] == "true"
    assert decode(first.headers[HEADER]) and decode(again.headers[HEADER])


class Recording(httpx.BaseTransport):
    """An HTTP transport that notes the bookmark header of each request it sends."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[tuple[str, str | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append((request.url.path.rsplit("/", 1)[-1], request.headers.get(HEADER)))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_the_remote_clients_send_back_the_bookmark_of_their_last_write(
    served_a: Served, served_b: Served, writer: NewKey, ns: str
) -> None:
    recording = Recording()
    with RemoteMemory(served_a.url, writer.key, ns=ns, transport=recording) as on_a:
        fact = on_a.remember("Di works at Initech.")
        mark = on_a.bookmark
        assert mark is not None and decode(mark)
        on_a.recall("Di", track_access=False)
    assert recording.sent == [("facts", None), ("search", mark)]

    async def on_b() -> list[str]:
        async with AsyncRemoteMemory(served_b.url, writer.key, ns=ns) as remote:
            remote.bookmark = mark  # handed over: B reads what A wrote
            return [h.id for h in (await remote.recall("Di", track_access=False)).hits]

    assert asyncio.run(on_b()) == [fact.id]


def test_an_mcp_write_reports_its_bookmark_and_an_mcp_call_follows_one(
    served_a: Served, served_b: Served, writer: NewKey
) -> None:
    def connect(served: Served, headers: dict[str, str]) -> McpClient:
        http = httpx2.AsyncClient(headers={**bearer(writer), **headers}, timeout=60)
        return McpClient(streamable_http_client(f"{served.url}/mcp", http_client=http))

    async def flow() -> tuple[dict[str, Any], str]:
        async with connect(served_a, {}) as session:
            added = await session.call_tool("add_memory", {"text": "Eve likes chess."})
            written = json.loads(added.content[0].text)  # type: ignore[union-attr]
            searched = await session.call_tool("search_memories", {"query": "Eve"})
            assert "bookmark" not in json.loads(searched.content[0].text)  # type: ignore[union-attr]
        async with connect(served_b, {HEADER: written["bookmark"]}) as session:
            found = await session.call_tool("search_memories", {"query": "Eve"})
            text = found.content[0].text  # type: ignore[union-attr]
        return written, text

    written, found = asyncio.run(flow())
    assert decode(written["bookmark"])
    assert "Eve likes chess." in found
