"""The MCP server's pure logic: its policy (tools, namespaces), the compact JSON of its
results, and id prefixes. The database behaviour is tested in tests/integration/test_mcp.py."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import BaseModel

from graphmem.edge.hosts import EdgePolicy, HostOriginCheck, edge_policy
from graphmem.errors import ClientUsageError, DatabaseError, InvalidInputError
from graphmem.mcp.options import (
    ALL_TOOLS,
    CORE_TOOLS,
    READ_TOOLS,
    WRITE_TOOLS,
    McpOptions,
    tool_selection,
)
from graphmem.mcp.server import GraphmemServer, WarmUp, warm_memory
from graphmem.mcp.shape import dumps, fitted, ids_in, plain, replace_ids, short_ids
from graphmem.mcp.tools import Tools

A = "0a1b2c3d-0000-4000-8000-000000000001"
B = "0a1b2c3d-1111-4000-8000-000000000002"
C = "9f8e7d6c-2222-4000-8000-000000000003"


def test_profiles_and_read_only() -> None:
    assert tool_selection("core", read_only=False) == tuple(t for t in ALL_TOOLS if t in CORE_TOOLS)
    assert set(tool_selection("all", read_only=False)) == set(ALL_TOOLS)
    assert set(tool_selection("all", read_only=True)) == set(READ_TOOLS)
    assert set(tool_selection("core", read_only=True)) == {
        "search_memories",
        "get_context",
        "get_history",
    }
    assert tool_selection("core,list_contradictions, forget", read_only=False)[-1] == "forget"
    for bad in ("everything", "core,drop_all", " , "):
        with pytest.raises(ClientUsageError):
            tool_selection(bad, read_only=False)
    with pytest.raises(ClientUsageError, match="they all write"):
        tool_selection("forget,add_memory", read_only=True)
    with pytest.raises(ClientUsageError):
        McpOptions(namespace="team", tools=())
    assert set(READ_TOOLS).isdisjoint(WRITE_TOOLS)


def test_the_namespace_policy() -> None:
    options = McpOptions(namespace="team", allowed=("alice", "bob"))
    assert options.namespace_for(None) == "team"
    assert options.namespace_for("") == "team"
    assert options.namespace_for("bob") == "bob"
    with pytest.raises(InvalidInputError, match="'carol' is not open to this server"):
        options.namespace_for("carol")
    with pytest.raises(ClientUsageError):
        McpOptions(namespace="bad namespace!")
    with pytest.raises(ClientUsageError):
        McpOptions(namespace="team", read_only=True, tools=CORE_TOOLS)
    with pytest.raises(ClientUsageError):
        McpOptions(namespace="team", max_chars=10)


def test_plain_drops_noise_and_keeps_times_to_the_second() -> None:
    data = plain(
        {
            "id": A,
            "ns": "team",
            "text_hash": "x",
            "at": datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC),
            "when": "2026-03-01T09:30:15.5+02:00",
            "tags": [],
            "reason": None,
            "nested": [{"access_count": 3, "text": "kept"}],
            "metadata": {"ns": "mine", "day": "2026-03-01T09:30:15.123456+00:00", "n": None},
        }
    )
    assert data == {
        "id": A,
        "at": "2026-03-01T09:30:15.123Z",
        "when": "2026-03-01T09:30:15.5+02:00",
        "nested": [{"text": "kept"}],
        # The caller's own data, as stored.
        "metadata": {"ns": "mine", "day": "2026-03-01T09:30:15.123456+00:00", "n": None},
    }


def test_ids_are_shortened_only_where_one_id_has_the_prefix() -> None:
    data = {"a": A, "b": B, "c": C, "words": f"replaced by {C} because"}
    assert ids_in(data) == {A, B, C}
    # A and B share their first 8 characters: both stay whole; C is unique in the graph.
    mapping = short_ids(ids_in(data), {C[:8]: C, A[:8]: A})
    assert mapping == {A: A, B: B, C: C[:8]}
    assert replace_ids(data, mapping)["words"] == f"replaced by {C[:8]} because"
    # A prefix the graph does not know (a run or erasure id) stays whole.
    assert short_ids({C}, {}) == {C: C}


def test_the_cap_drops_items_from_the_end_and_says_so() -> None:
    items = [{"text": f"memory number {n} " + "x" * 80} for n in range(40)]
    data = fitted({"results": items, "as_of": "now"}, 1_000, "results")
    assert len(dumps(data)) <= 1_000 and data["as_of"] == "now"
    kept = len(data["results"])
    assert 1 <= kept < 40 and data["results"] == items[:kept]
    assert data["more"].startswith(f"{40 - kept} more results not shown")
    assert "more" not in fitted({"results": items[:2]}, 1_000, "results")
    # tail: the last items stay (a history's newest events).
    newest = fitted({"events": items}, 1_000, "events", tail=True)
    assert newest["events"] == items[40 - len(newest["events"]) :]


def test_the_cap_keeps_every_scalar_and_trims_every_list() -> None:
    ids = [f"{n:08x}-0000-4000-8000-000000000000" for n in range(600)]
    data = fitted(
        {"dry_run": False, "erasure": "e-1", "facts": ids[:5], "messages": ids}, 2_000, "facts"
    )
    assert len(dumps(data)) <= 2_000
    assert data["dry_run"] is False and data["erasure"] == "e-1"
    # Every list keeps the same share (the main one at least one item).
    assert data["facts"] == ids[: len(data["facts"])] and 1 <= len(data["facts"]) <= 5
    assert data["messages"] == ids[: len(data["messages"])] and 0 < len(data["messages"]) < 600
    assert f"{600 - len(data['messages'])} more messages" in data["more"]


def test_one_long_text_is_cut_to_the_room_left() -> None:
    text = "word " * 5_000
    data = fitted({"context": text, "tokens": 5_000}, 16_000)
    assert 15_000 < len(dumps(data)) <= 16_000
    assert data["context"].endswith("…") and data["tokens"] == 5_000 and data["clipped"]


class _Memory:
    """Only what the id resolution asks of the client."""

    def __init__(self, known: list[str]) -> None:
        self.known = known
        self.asked: list[int] = []

    async def match_ids(self, prefixes: list[str], *, ns: str) -> dict[str, list[str]]:
        return {p: [k for k in self.known if k.startswith(p)][:3] for p in prefixes}


def test_an_ambiguous_or_unknown_prefix_is_refused() -> None:
    tools = Tools(_Memory([A, B, C]), McpOptions(namespace="team"))  # type: ignore[arg-type]

    async def resolve(ids: list[str]) -> Any:
        return await tools._ids(ids, "team")

    assert asyncio.run(resolve([C[:8], A])) == [C, A]
    with pytest.raises(InvalidInputError, match="names several memories"):
        asyncio.run(resolve([A[:8]]))
    with pytest.raises(InvalidInputError, match="starts with"):
        asyncio.run(resolve(["ffffffff"]))


class _Failing(_Memory):
    async def stats(self, *, ns: str) -> Any:
        raise DatabaseError("Neo.DatabaseError.General.UnknownError: disk at /data/x is full")

    async def match_ids(self, prefixes: list[str], *, ns: str) -> dict[str, list[str]]:
        self.asked.append(len(prefixes))
        if len(prefixes) > 500:
            raise InvalidInputError("too many")
        return {p: [k for k in self.known if k.startswith(p)] for p in prefixes}


def test_errors_become_tool_errors_and_the_server_keeps_its_internals() -> None:
    tools = Tools(_Failing([]), McpOptions(namespace="team", tools=ALL_TOOLS))  # type: ignore[arg-type]
    with pytest.raises(ToolError, match="InvalidInputError: namespace 'x' is not open"):
        asyncio.run(tools.memory_stats(namespace="x"))
    with pytest.raises(ToolError) as failed:
        asyncio.run(tools.memory_stats())
    assert "DatabaseError" in str(failed.value) and "/data" not in str(failed.value)


def test_ids_of_a_large_answer_are_checked_in_batches() -> None:
    ids = [f"{n:08x}-0000-4000-8000-000000000000" for n in range(1_200)]
    memory = _Failing(ids)
    tools = Tools(memory, McpOptions(namespace="team", max_chars=1_000_000))  # type: ignore[arg-type]
    text = asyncio.run(tools._out({"facts": ids}, "team"))
    assert memory.asked == [500, 500, 200]
    assert json.loads(text)["facts"] == [i[:8] for i in ids]


def test_a_former_tool_name_selects_the_tool_it_became(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="graphmem.mcp"):
        assert tool_selection("delete_memory", read_only=False) == ("retract_memory",)
    assert [r.getMessage() for r in caplog.records] == [
        "the tool delete_memory is now called retract_memory: --tools delete_memory is deprecated"
    ]
    both = tool_selection("core,delete_memory,retract_memory", read_only=False)
    assert both.count("retract_memory") == 1 and set(CORE_TOOLS) < set(both)
    with pytest.raises(ClientUsageError, match="they all write"):
        tool_selection("delete_memory", read_only=True)


class _Point(BaseModel):
    x: int


def test_only_the_sdks_own_argument_error_becomes_graphmems_line() -> None:
    server = GraphmemServer("test")

    async def parse(text: str) -> str:
        """Parse a point (a crash when the text is not a number)."""
        return str(_Point.model_validate({"x": text}).x)

    server.add_tool(parse, name="parse", structured_output=False)
    with pytest.raises(ToolError) as missing:
        asyncio.run(server.call_tool("parse", {}))
    assert type(missing.value) is ToolError
    assert str(missing.value) == "InvalidInputError: parse: text: a value is required"
    # A pydantic error inside the tool is a crash: the SDK's own error, detail withheld.
    with pytest.raises(UnexpectedToolError) as crashed:
        asyncio.run(server.call_tool("parse", {"text": "seven"}))
    assert str(crashed.value) == "Error executing tool parse"


class _Client:
    """Only what the warm-up asks of the client; connecting fails with ``error``."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error
        self.embedder = object()
        self.connects = 0
        self.closed = False

    async def connect(self) -> None:
        self.connects += 1
        if self.error is not None:
            raise self.error

    async def close(self) -> None:
        self.closed = True


def test_a_warm_up_that_fails_unexpectedly_is_logged_and_the_client_still_closes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = _Client(RuntimeError("the socket library broke"))

    async def scenario() -> None:
        async with warm_memory(client, after=0):  # type: ignore[arg-type]
            await asyncio.sleep(0.1)
            assert client.connects == 1

    with caplog.at_level(logging.ERROR, logger="graphmem.mcp"):
        asyncio.run(scenario())
    assert client.closed
    assert "the warm-up failed (each call tries again): RuntimeError: the socket library broke" in [
        r.getMessage() for r in caplog.records
    ]


def test_a_call_after_the_server_stopped_starts_no_warm_up() -> None:
    client = _Client()

    async def scenario() -> None:
        warm_up = WarmUp(client)  # type: ignore[arg-type]
        await warm_up.stop()

        async def call_next(ctx: Any) -> str:
            return "answer"

        assert await warm_up(SimpleNamespace(method="tools/call"), call_next) == "answer"
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert client.connects == 0


def _edge(policy: EdgePolicy, scope: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """What the edge sends for ``scope``, and the scopes that reached the app."""
    sent: list[Any] = []
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(HostOriginCheck(app, policy)(scope, receive, send))
    return sent, reached


def test_websocket_handshakes_are_checked_like_http_requests() -> None:
    policy = edge_policy("127.0.0.1", 8765)

    def handshake(host: str, origin: str | None = None, denial: bool = False) -> dict[str, Any]:
        headers = [(b"host", host.encode())]
        if origin is not None:
            headers.append((b"origin", origin.encode()))
        extensions: dict[str, Any] = {"websocket.http.response": {}} if denial else {}
        return {"type": "websocket", "headers": headers, "extensions": extensions}

    sent, reached = _edge(policy, handshake("evil.example:8765"))
    assert reached == [] and [m["type"] for m in sent] == ["websocket.close"]
    sent, reached = _edge(policy, handshake("localhost:8765", "http://evil.example"))
    assert reached == [] and [m["type"] for m in sent] == ["websocket.close"]
    # A server that takes a denial response gets the same status as over HTTP.
    sent, reached = _edge(policy, handshake("evil.example:8765", denial=True))
    assert reached == []
    assert [m["type"] for m in sent] == [
        "websocket.http.response.start",
        "websocket.http.response.body",
    ]
    assert sent[0]["status"] == 421 and sent[1]["body"] == b"Invalid Host header"
    sent, reached = _edge(policy, handshake("localhost:8765", "http://localhost:8765"))
    assert sent == [] and reached == ["websocket"]
    sent, reached = _edge(policy, {"type": "http", "headers": [(b"host", b"evil.example")]})
    assert reached == [] and sent[0]["status"] == 421
    assert _edge(policy, {"type": "lifespan"}) == ([], ["lifespan"])


def test_allowed_hosts_are_allowed_origins_too() -> None:
    policy = edge_policy("127.0.0.1", 8765, ["Memory.example.com", "proxy.example:8443"])
    assert policy.hosts == {
        "127.0.0.1:8765",
        "localhost:8765",
        "memory.example.com",
        "proxy.example:8443",
    }
    assert policy.origins == {
        "http://127.0.0.1:8765",
        "http://localhost:8765",
        "http://memory.example.com",
        "https://memory.example.com",
        "http://proxy.example:8443",
        "https://proxy.example:8443",
    }
    on_80 = edge_policy("127.0.0.1", 80, ["memory.example.com:80"], ["https://app.example/"])
    assert on_80.origins == {
        "http://127.0.0.1",
        "http://127.0.0.1:80",
        "http://localhost",
        "http://localhost:80",
        "http://memory.example.com:80",
        "https://memory.example.com:80",
        "https://app.example",
    }
