"""The ``Graphmem-Bookmark`` header without a database: its token, the per-request bookmark
manager the client's sessions open with, the service's edge (a malformed header refused, a
write's answer given its bookmark) and the remote clients sending back the last one they got."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Collection
from typing import Any

import httpx
import pytest
from neo4j.api import AsyncBookmarkManager, BookmarkManager
from neo4j.exceptions import ClientError, Neo4jError, TransientError

from graphmem.edge.bookmarks import SCOPE_CAUSAL, Causality
from graphmem.errors import InvalidInputError, TransactionTimeoutError
from graphmem.models.bookmarks import HEADER, decode, encode
from graphmem.remote import AsyncRemoteMemory, RemoteMemory
from graphmem.store import bookmarks
from graphmem.store.bookmarks import Causal, following
from graphmem.store.db import map_driver_error

MARK = "FB:kcwQFQMw/7Q3SieoIra5QvyprgaQ"
URL = "http://memory.test:8080"
FACT = {
    "id": "f-1",
    "ns": "team",
    "text": "Ada works at Acme.",
    "status": "active",
    "recorded_at": "2026-03-01T09:00:00Z",
    "text_hash": "h",
}
RECALL = {"query": "Ada", "ns": "team", "hits": []}


# --- the token -------------------------------------------------------------------------------
def test_a_token_is_short_header_safe_and_reads_back() -> None:
    token = encode([MARK, MARK])
    assert decode(token) == (MARK,)
    assert len(token) < 60 and token.isascii() and "=" not in token
    assert encode(["b", "a"]) == encode(["a", "b"])


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not base64!",
        "a" * 5000,
        base64.urlsafe_b64encode(b"{}").decode().rstrip("="),  # not a list
        base64.urlsafe_b64encode(b"[]").decode().rstrip("="),  # empty
        base64.urlsafe_b64encode(b"[1]").decode().rstrip("="),  # not text
        base64.urlsafe_b64encode(json.dumps(["a b"]).encode()).decode().rstrip("="),
        base64.urlsafe_b64encode(json.dumps(["x"] * 17).encode()).decode().rstrip("="),
        "AAAA",  # decodes to bytes that are not JSON
    ],
)
def test_anything_else_is_the_callers_input_error(token: str) -> None:
    with pytest.raises(InvalidInputError, match="Graphmem-Bookmark"):
        decode(token)


# --- the sessions' bookmark manager ----------------------------------------------------------
class Manager(BookmarkManager):
    def __init__(self) -> None:
        self.marks: set[str] = {"own"}

    def get_bookmarks(self) -> Collection[str]:
        return set(self.marks)

    def update_bookmarks(self, previous: Collection[str], new: Collection[str]) -> None:
        self.marks = (self.marks - set(previous)) | set(new)


class AsyncManager(AsyncBookmarkManager):
    def __init__(self) -> None:
        self.sync = Manager()

    async def get_bookmarks(self) -> Collection[str]:
        return self.sync.get_bookmarks()

    async def update_bookmarks(self, previous: Collection[str], new: Collection[str]) -> None:
        self.sync.update_bookmarks(previous, new)


def test_outside_a_request_the_clients_manager_is_used_as_it_is() -> None:
    base = Manager()
    assert bookmarks.manager(base) is base


def test_a_request_waits_for_its_bookmarks_and_notes_those_of_each_commit() -> None:
    base = Manager()
    with following(Causal(("theirs",), report=True)) as causal:
        session = bookmarks.manager(base)
        assert set(session.get_bookmarks()) == {"own", "theirs"}
        assert causal.answered() is None  # nothing committed yet
        session.update_bookmarks(session.get_bookmarks(), ["new"])
    assert causal.answered() == ("new",)
    assert base.marks == {"new"}  # the client's chain goes on from the request's commit
    assert Causal(latest=("x",)).answered() is None  # a read's answer reports none


def test_the_async_drivers_manager_gets_an_async_one() -> None:
    base = AsyncManager()

    async def run() -> tuple[set[str], Causal]:
        with following(Causal(("theirs",))) as causal:
            session = bookmarks.manager(base)
            assert type(session).__name__ == "_AsyncRequestManager"
            marks = set(await session.get_bookmarks())
            await session.update_bookmarks(marks, ["new"])
        return marks, causal

    marks, causal = asyncio.run(run())
    assert marks == {"own", "theirs"} and causal.latest == ("new",)


# --- what Neo4j answers a bookmark it cannot follow ------------------------------------------
@pytest.mark.parametrize(
    ("cls", "code", "error"),
    [
        (TransientError, "Neo.TransientError.Transaction.BookmarkTimeout", TransactionTimeoutError),
        (ClientError, "Neo.ClientError.Transaction.InvalidBookmark", InvalidInputError),
        (ClientError, "Neo.ClientError.Transaction.InvalidBookmarkMixture", InvalidInputError),
    ],
)
def test_a_bookmark_neo4j_cannot_follow_is_named_as_such(
    cls: type[Neo4jError], code: str, error: type[Exception]
) -> None:
    mapped = map_driver_error(cls._hydrate_neo4j(code=code, message="database says no"))
    assert type(mapped) is error
    assert "Graphmem-Bookmark" in str(mapped) and "nothing was read or written" in str(mapped)


# --- the service's edge ----------------------------------------------------------------------
class Recorded:
    """An ASGI app that notes the request's bookmarks and, as a write would, commits."""

    def __init__(self) -> None:
        self.seen: list[Causal | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        causal = bookmarks.current()
        self.seen.append(causal)
        assert scope[SCOPE_CAUSAL] is causal
        if causal is not None:
            causal.latest = ("after-" + "-".join(causal.given),)
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def _call(
    app: Any, method: str, path: str, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


def test_a_write_answers_with_the_bookmark_of_its_last_commit() -> None:
    inner = Recorded()
    app = Causality(inner)
    given = encode(["B1"])
    status, headers, _ = _call(
        app, "POST", "/v1/namespaces/team/facts", {HEADER: given, "x-other": "1"}
    )
    assert status == 201
    assert inner.seen[0] is not None and inner.seen[0].given == ("B1",)
    assert decode(headers[HEADER.lower()]) == ("after-B1",)


def test_a_read_follows_the_bookmark_but_answers_none() -> None:
    inner = Recorded()
    status, headers, _ = _call(
        Causality(inner), "GET", "/v1/namespaces/team/facts/f-1", {HEADER: encode(["B1"])}
    )
    assert status == 201 and HEADER.lower() not in headers
    assert inner.seen[0] is not None and inner.seen[0].given == ("B1",)


@pytest.mark.parametrize("value", ["%%%", encode(["B1"]) + "!"])
def test_a_malformed_bookmark_is_refused_before_anything_runs(value: str) -> None:
    inner = Recorded()
    status, _, body = _call(Causality(inner), "POST", "/v1/namespaces/team/facts", {HEADER: value})
    assert status == 422 and inner.seen == []
    assert json.loads(body)["error"]["type"] == "InvalidInputError"


# --- the remote clients ----------------------------------------------------------------------
class Server:
    """Answers remember with a bookmark, recall without, and records each request."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.count = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "POST" and request.url.path.endswith("/facts"):
            self.count += 1
            return httpx.Response(201, json=FACT, headers={HEADER: encode([f"W{self.count}"])})
        return httpx.Response(200, json=RECALL)


def _sent(server: Server) -> list[tuple[str, str | None]]:
    return [(r.url.path.rsplit("/", 1)[-1], r.headers.get(HEADER)) for r in server.requests]


def test_the_remote_client_sends_back_the_bookmark_of_its_last_write() -> None:
    server = Server()
    memory = RemoteMemory(URL, "k", ns="team", transport=httpx.MockTransport(server))
    memory.recall("Ada")
    memory.remember("Ada works at Acme.")
    memory.recall("Ada")
    memory.remember("Ada moved to Globex.")
    memory.recall("Ada")
    assert _sent(server) == [
        ("search", None),
        ("facts", None),
        ("search", encode(["W1"])),
        ("facts", encode(["W1"])),
        ("search", encode(["W2"])),
    ]
    assert memory.bookmark == encode(["W2"])


def test_the_async_remote_client_does_the_same() -> None:
    server = Server()

    async def run() -> str | None:
        transport = httpx.MockTransport(server)
        async with AsyncRemoteMemory(URL, "k", ns="team", transport=transport) as memory:
            await memory.remember("Ada works at Acme.")
            await memory.recall("Ada")
            return memory.bookmark

    assert asyncio.run(run()) == encode(["W1"])
    assert _sent(server) == [("facts", None), ("search", encode(["W1"]))]


def test_a_bookmark_the_client_cannot_read_is_not_kept() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(201, json=FACT, headers={HEADER: "%%%"})

    memory = RemoteMemory(URL, "k", ns="team", transport=httpx.MockTransport(handler))
    memory.remember("Ada works at Acme.")
    assert memory.bookmark is None
