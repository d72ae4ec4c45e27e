"""`graphmem mcp` against the real Neo4j, started as a host starts it (a child process over
stdio, or over streamable HTTP) and driven by the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from graphmem.cli import main
from graphmem.client.aio import AsyncMemory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder, EmbedderWrapper, Vectors
from graphmem.errors import EmbeddingError, InvalidInputError
from graphmem.mcp.options import CORE_TOOLS, READ_TOOLS, WRITE_TOOLS, McpOptions, tool_selection
from graphmem.mcp.server import build_server, warm_memory
from graphmem.settings import GraphmemSettings
from tests.helpers import cli_env, free_port


def _stdio(env: dict[str, str], args: list[str]) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "graphmem", "mcp", *args], env=env
    )
    # A host names itself in its handshake: the actor of the changes made without a key.
    return Client(params, client_info=Implementation(name="test-host", version="1"))


@asynccontextmanager
async def _http(
    env: dict[str, str], args: list[str], port: int | None = None
) -> AsyncIterator[Client]:
    port = port or free_port()
    command = [sys.executable, "-m", "graphmem", "mcp", "--transport", "http", "--port", str(port)]
    child = subprocess.Popen(
        [*command, *args], env={**os.environ, **env}, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if child.poll() is not None:
                raise AssertionError(f"the HTTP server stopped: {child.stderr.read()}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("the HTTP server did not start in 120 s") from None
                await asyncio.sleep(0.2)
        async with keyed_client(f"http://127.0.0.1:{port}/mcp", env) as client:
            yield client
    finally:
        child.terminate()
        child.wait(timeout=30)


def api_key(env: dict[str, str], role: str = "write") -> str:
    """A new API key opening the test's namespace and those that start with its name."""
    made = CliRunner().invoke(
        main,
        [
            "keys",
            "create",
            f"mcp-{uuid.uuid4().hex[:8]}",
            "--prefix",
            env["GRAPHMEM_NAMESPACE"],
            "--role",
            role,
            "--json",
        ],
        env=env,
    )
    assert made.exit_code == 0, made.output
    return str(json.loads(made.stdout)["key"])


def keyed_client(url: str, env: dict[str, str], role: str = "write") -> Client:
    """The SDK's client on streamable HTTP, sending a new key with every request."""
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {api_key(env, role)}"},
        timeout=httpx2.Timeout(30, read=300),
    )
    return Client(streamable_http_client(url, http_client=http))


def _server(transport: str, env: dict[str, str], args: list[str]) -> Any:
    return _stdio(env, args) if transport == "stdio" else _http(env, args)


async def _call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, f"{tool}: {text}"
    return json.loads(text)


async def _error(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.content}"
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    return text


def _export(graph: Graph, ns: str) -> list[Any]:
    """Every node of the namespace and every relationship touching one, with properties."""
    with graph.driver.session(database=graph.database) as session:
        rows = session.run(
            "MATCH (n) WHERE n.ns = $ns OPTIONAL MATCH (n)-[r]-() "
            "RETURN labels(n) AS labels, properties(n) AS props, "
            "collect(DISTINCT [type(r), properties(r)]) AS rels",
            ns=ns,
        ).data()
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


@pytest.fixture
def env(graph: Graph, ns: str) -> dict[str, str]:
    return cli_env(graph, ns)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_remember_update_history_and_forget(
    transport: str, env: dict[str, str], graph: Graph, ns: str
) -> None:
    other = f"{ns}-other"

    async def flow() -> None:
        async with _server(transport, env, ["--allow-namespace", other]) as client:
            listed = await client.list_tools()
            assert sorted(t.name for t in listed.tools) == sorted(CORE_TOOLS)
            lyon = (await _call(client, "add_memory", text="Alice lives in Lyon"))["memory"]
            assert len(lyon["id"]) == 8 and lyon["status"] == "active"
            found = await _call(client, "search_memories", query="Where does Alice live?")
            assert [r["text"] for r in found["results"]] == ["Alice lives in Lyon"]
            time.sleep(0.05)
            between = datetime.now(UTC).isoformat()
            time.sleep(0.05)
            berlin = await _call(
                client,
                "add_memory",
                text="Alice lives in Berlin",
                supersedes=[lyon["id"]],
                reason="she moved in March",
            )
            assert berlin["superseded"] == [lyon["id"]]
            now = await _call(client, "search_memories", query="Where does Alice live?")
            assert [r["text"] for r in now["results"]] == ["Alice lives in Berlin"]
            then = await _call(
                client, "search_memories", query="Where does Alice live?", as_of=between
            )
            assert [r["text"] for r in then["results"]] == ["Alice lives in Lyon"]
            both = await _call(
                client, "search_memories", query="Where does Alice live?", include_superseded=True
            )
            assert {r["text"]: r["status"] for r in both["results"]} == {
                "Alice lives in Berlin": "active",
                "Alice lives in Lyon": "superseded",
            }
            history = await _call(client, "get_history", id=lyon["id"])
            assert history["believed_now"] == berlin["memory"]["id"]
            assert "'Alice lives in Lyon'" in history["explanation"]
            assert "replaced by 'Alice lives in Berlin'" in history["explanation"]
            assert "because she moved in March" in history["explanation"]
            assert [e["event"] for e in history["events"]] == ["recorded", "recorded", "superseded"]
            # Each change, the creations included, names its actor: the host over stdio, the
            # API key over HTTP.
            actor = "(by mcp:test-host)" if transport == "stdio" else "(by mcp-"
            assert all(actor in e["what"] for e in history["events"]), history
            context = await _call(client, "get_context", query="Alice's city")
            assert "Alice lives in Berlin" in context["context"]
            assert "Lyon" not in context["context"]
            # Another namespace: only an allowed one.
            elsewhere = await _call(client, "add_memory", text="Bob likes tea", namespace=other)
            assert elsewhere["memory"]["text"] == "Bob likes tea"
            refused = await _error(client, "search_memories", query="tea", namespace="secret")
            assert "namespace 'secret' is not open to this server" in refused
            # A malformed argument: a tool error, nothing written.
            before = _export(graph, ns)
            bad = await _error(client, "add_memory", text="x", supersedes="not-a-list")
            assert "supersedes" in bad
            assert "NotFoundError" in await _error(
                client, "add_memory", text="Carol lives in Rome", supersedes=["ffffffff"]
            )
            assert "InvalidInputError" in await _error(client, "add_memory", text="   ")
            assert _export(graph, ns) == before
            # Forget: a dry run first, then for good.
            chain = [lyon["id"], berlin["memory"]["id"]]
            dry = await _call(client, "forget", ids=chain, reason="user asked")
            assert dry["dry_run"] is True and sorted(dry["facts"]) == sorted(chain)
            assert "confirm" in dry["next"]
            assert _export(graph, ns) == before
            done = await _call(client, "forget", ids=chain, reason="user asked", confirm=True)
            assert done["dry_run"] is not True and sorted(done["facts"]) == sorted(chain)
            gone = await _call(
                client, "search_memories", query="Where does Alice live?", include_superseded=True
            )
            assert gone["results"] == [] and gone["note"] == "nothing found"
            assert "Alice" not in json.dumps(await _call(client, "get_history", id=lyon["id"]))

    _run(flow())
    with graph.driver.session(database=graph.database) as session:
        texts = session.run(
            "MATCH (f:Fact) WHERE f.ns = $ns RETURN f.text AS text", ns=other
        ).value()
    assert texts == ["Bob likes tea"]


def test_read_only_refuses_every_write_tool(env: dict[str, str], graph: Graph, ns: str) -> None:
    async def flow() -> None:
        async with _stdio(env, ["--tools", "all"]) as writer:
            fact = (await _call(writer, "add_memory", text="The office is in Leeds"))["memory"]
        before = _export(graph, ns)
        async with _stdio(env, ["--tools", "all", "--read-only"]) as client:
            listed = sorted(t.name for t in (await client.list_tools()).tools)
            assert listed == sorted(READ_TOOLS)
            for tool in WRITE_TOOLS:
                refused = await _error(
                    client, tool, text="x", id=fact["id"], ids=[fact["id"]], reason="r"
                )
                assert "Unknown tool" in refused or tool in refused
            found = await _call(client, "search_memories", query="office")
            assert [r["text"] for r in found["results"]] == ["The office is in Leeds"]
            beliefs = await _call(client, "list_beliefs", as_of="now")
            assert [b["text"] for b in beliefs["beliefs"]] == ["The office is in Leeds"]
            context = await _call(client, "get_context", query="office")
            assert "Leeds" in context["context"]
            assert (await _call(client, "get_memory", id=fact["id"]))["memory"]["id"] == fact["id"]
            history = await _call(client, "get_history", id=fact["id"])
            assert history["believed_now"] == fact["id"]
        # Reads in read-only mode stamp no access either.
        assert _export(graph, ns) == before

    _run(flow())


def test_all_tools_contradictions_messages_review_and_resources(
    env: dict[str, str], graph: Graph, ns: str
) -> None:
    other = f"{ns}-other"

    async def flow() -> None:
        async with _stdio(
            env, ["--tools", "all", "--full-ids", "--allow-namespace", other]
        ) as client:
            tea = (await _call(client, "add_memory", text="Dana drinks tea"))["memory"]
            assert len(tea["id"]) == 36
            coffee = await _call(
                client, "add_memory", text="Dana drinks coffee", contradicts=[tea["id"]]
            )
            open_ = await _call(client, "list_contradictions")
            assert len(open_["contradictions"]) == 1
            settled = await _call(
                client,
                "resolve_contradiction",
                keep=coffee["memory"]["id"],
                other=tea["id"],
                reason="she said so",
            )
            assert settled["superseded"]["status"] == "superseded"
            assert (await _call(client, "list_contradictions")) == {"contradictions": []}
            stored = await _call(
                client,
                "add_messages",
                messages=[{"content": "I moved my desk to room 4", "id": "m1"}],
                session_id="s1",
            )
            assert len(stored["stored"]) == 1
            again = await _call(
                client,
                "add_messages",
                messages=[{"content": "I moved my desk to room 4", "id": "m1"}],
                session_id="s1",
            )
            assert again["stored"] == [] and len(again["duplicates"]) == 1
            hit = await _call(client, "search_memories", query="desk room", kinds=["message"])
            assert [r["kind"] for r in hit["results"]] == ["message"]
            wrong = await _call(client, "add_memory", text="Dana's desk is blue")
            gone = await _call(
                client, "retract_memory", id=wrong["memory"]["id"], reason="never true"
            )
            assert gone["retracted"]["status"] == "retracted"
            stats = await _call(client, "memory_stats")
            assert stats["facts_by_status"]["retracted"] == 1
            changed = await _call(client, "what_changed", since="1 hours ago")
            kinds = [c["change"] for c in changed["changes"]]
            assert "contradiction opened" in kinds and "contradiction resolved" in kinds
            # Review flags: a fact that references one superseded since is flagged.
            desk = (await _call(client, "add_memory", text="Dana sits at desk 12"))["memory"]
            note = await _call(
                client, "add_memory", text="Desk 12 is by the window", references=[desk["id"]]
            )
            await _call(client, "add_memory", text="Dana sits at desk 30", supersedes=[desk["id"]])
            flags = await _call(client, "list_review_flags")
            assert [f["flagged_id"] for f in flags["flags"]] == [note["memory"]["id"]]
            closed = await _call(client, "confirm_review", id=note["memory"]["id"], reason="ok")
            assert len(closed["closed"]) == 1
            assert (await _call(client, "list_review_flags"))["flags"] == []
            # Contradictions between two facts already stored.
            a = (await _call(client, "add_memory", text="The launch is on Monday"))["memory"]
            b = (await _call(client, "add_memory", text="The launch is on Friday"))["memory"]
            marked = await _call(client, "mark_contradiction", id_a=a["id"], id_b=b["id"])
            assert len(marked["marked"]) == 2
            assert len((await _call(client, "list_contradictions"))["contradictions"]) == 1
            # Valid time and what was believed at a past time.
            await _call(
                client,
                "add_memory",
                text="Dana worked at Initech",
                valid_from="2020-01-01",
                valid_to="2022-01-01",
            )
            then = await _call(
                client, "search_memories", query="Dana Initech", valid_at="2021-06-01"
            )
            assert "Dana worked at Initech" in [r["text"] for r in then["results"]]
            later = await _call(
                client, "search_memories", query="Dana Initech", valid_at="2023-01-01"
            )
            assert "Dana worked at Initech" not in [r["text"] for r in later["results"]]
            past = await _call(client, "list_beliefs", as_of=tea["recorded_at"])
            assert [f["text"] for f in past["beliefs"]] == ["Dana drinks tea"]
            # An id of another namespace is not found here; a partly bad list writes nothing.
            elsewhere = await _call(client, "add_memory", text="Zed", namespace=other)
            before = _export(graph, ns)
            assert "NotFoundError" in await _error(
                client, "get_memory", id=elsewhere["memory"]["id"]
            )
            assert "NotFoundError" in await _error(
                client,
                "add_memory",
                text="The launch moved to Tuesday",
                supersedes=[a["id"], elsewhere["memory"]["id"]],
            )
            assert _export(graph, ns) == before
            # Consolidation: a dry run by default, then applied.
            await _call(client, "add_memory", text="Dana's badge number is 5521")
            await _call(client, "add_memory", text="dana's badge number is 5521.")
            dry = await _call(client, "consolidate")
            assert dry["status"] == "dry_run" and dry["applied"]
            assert _export(graph, ns) != before  # the two facts above
            before = _export(graph, ns)
            assert (await _call(client, "consolidate"))["status"] == "dry_run"
            assert _export(graph, ns) == before
            applied = await _call(client, "consolidate", confirm=True)
            assert applied["status"] == "finished" and applied["run"]
            assert [op["op"] for op in applied["applied"]] == ["MERGE"]
            # Forget a conversation: a dry run, then for good.
            sessions = await _call(client, "forget", session_id="s1", reason="asked")
            assert sessions["dry_run"] is True and len(sessions["messages"]) == 1
            gone = await _call(client, "forget", session_id="s1", reason="asked", confirm=True)
            assert gone["messages"] == sessions["messages"] and gone["erasure"]
            # Resources and the prompt.
            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            assert "graphmem://schema" in resources
            assert "graphmem://cypher/beliefs_as_of" in resources
            schema = await client.read_resource("graphmem://schema")
            assert "SUPERSEDES" in schema.contents[0].text  # type: ignore[union-attr]
            prompt = await client.get_prompt("memory_guidelines")
            assert "supersedes" in prompt.messages[0].content.text  # type: ignore[union-attr]

    _run(flow())


def test_a_large_result_is_capped_with_a_more_marker(env: dict[str, str], ns: str) -> None:
    async def flow() -> None:
        async with _stdio(env, ["--max-result-chars", "1000"]) as client:
            for n in range(8):
                await _call(
                    client,
                    "add_memory",
                    text=f"Project note {n}: the build server in rack {n} runs the nightly jobs",
                )
            result = await client.call_tool(
                "search_memories", {"query": "build server nightly jobs", "limit": 8}
            )
            text = result.content[0].text  # type: ignore[union-attr]
            assert len(text) <= 1000
            data = json.loads(text)
            assert 1 <= len(data["results"]) < 8
            assert data["more"].startswith(f"{8 - len(data['results'])} more results")

    _run(flow())


@pytest.mark.parametrize("full_ids", [False, True])
def test_the_context_text_shows_ids_as_the_rest_of_the_answer_does(
    full_ids: bool, graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    memory = AsyncMemory(test_settings, target=graph.target, embedder=embedder, ns=ns)
    server = build_server(memory, McpOptions(namespace=ns, full_ids=full_ids))

    async def scenario() -> None:
        async with warm_memory(memory, server), Client(server) as client:
            added = await _call(client, "add_memory", text="Frank keeps bees in Ghent")
            fact = added["memory"]["id"]
            assert len(fact) == (36 if full_ids else 8)
            context = await _call(client, "get_context", query="Frank's bees")
            assert context["facts"] == [fact]
            assert f"(fact {fact})" in context["context"]

    _run(scenario())


def test_match_ids_finds_facts_messages_and_forgotten_ones_by_prefix(memory: Any, ns: str) -> None:
    fact = memory.remember("Eve plays chess on Sundays")
    said = memory.ingest(["Eve: see you at the club"]).episodes[0]
    gone = memory.remember("Eve's door code is 4471")
    memory.forget([gone.id], reason="asked to")
    asked = [fact.id[:8], said.id[:11], gone.id[:8], fact.id, "0000000000"]
    assert memory.match_ids(asked) == {
        fact.id[:8]: [fact.id],
        said.id[:11]: [said.id],
        gone.id[:8]: [gone.id],
        fact.id: [fact.id],
        "0000000000": [],
    }
    assert memory.match_ids([fact.id[:8]], ns=f"{ns}-elsewhere") == {fact.id[:8]: []}
    for bad in ("abc", "ZZZZZZZZ", "0123456789abcdef0123456789abcdef01234", ""):
        with pytest.raises(InvalidInputError):
            memory.match_ids([bad])


class _GatedLoad(EmbedderWrapper):
    """The real embedder, whose model load waits for ``gate`` (or fails with ``error``)."""

    def __init__(
        self, inner: Embedder, gate: threading.Event, error: Exception | None = None
    ) -> None:
        super().__init__(inner)
        self.gate, self.error, self.loaded = gate, error, False

    def load(self) -> None:
        self.gate.wait(60)
        if self.error is not None:
            raise self.error
        self.loaded = True

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.load()
        return self.inner.embed(texts)


def _gated_server(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str, gated: _GatedLoad
) -> tuple[AsyncMemory, Any]:
    memory = AsyncMemory(test_settings, target=graph.target, embedder=gated, ns=ns)
    options = McpOptions(namespace=ns, tools=tool_selection("core", read_only=False))
    return memory, build_server(memory, options)


def test_the_handshake_and_tool_list_do_not_wait_for_the_model(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    gate = threading.Event()
    gated = _GatedLoad(embedder, gate)
    memory, server = _gated_server(graph, test_settings, embedder, ns, gated)

    async def scenario() -> None:
        async with warm_memory(memory, server), Client(server) as client:
            listed = await client.list_tools()  # answered while the model is still loading
            assert {tool.name for tool in listed.tools} == set(CORE_TOOLS)
            assert not gated.loaded
            search = asyncio.create_task(client.call_tool("search_memories", {"query": "tea"}))
            await asyncio.sleep(0.5)
            assert not search.done()  # the first call that embeds waits for the model
            gate.set()
            result = await search
            assert not result.is_error and gated.loaded

    _run(scenario())


def test_a_model_that_fails_to_load_is_a_clear_tool_error(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    gate = threading.Event()
    gate.set()
    failing = _GatedLoad(embedder, gate, EmbeddingError("the model files are damaged"))
    memory, server = _gated_server(graph, test_settings, embedder, ns, failing)

    async def scenario() -> None:
        async with warm_memory(memory, server), Client(server) as client:
            assert (await client.list_tools()).tools
            text = await _error(client, "search_memories", query="tea")
            assert "EmbeddingError: the memory server's embedding model" in text
            # A call that needs no embedding still works.
            await _call(client, "forget", reason="cleanup", session_id="no-such-session")

    _run(scenario())


def test_http_refuses_a_foreign_host_or_origin_on_any_loopback_address(
    env: dict[str, str], ns: str
) -> None:
    """DNS rebinding: a page on another site reaches 127.0.0.2 under its own name; the server
    bound there answers only its own Host, and only exact origins (not prefixes)."""
    import httpx

    port = free_port()
    bound = f"127.0.0.2:{port}"
    command = [sys.executable, "-m", "graphmem", "mcp", "--transport", "http"]
    args = ["--host", "127.0.0.2", "--port", str(port), "--allow-origin", "https://app.example"]
    args += ["--no-auth"]
    args += ["--allow-host", f"memory.test:{port}"]
    child = subprocess.Popen(
        [*command, *args], env={**os.environ, **env}, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert child.poll() is None, child.stderr.read()  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.2", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start in 120 s"
                time.sleep(0.2)
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }

        def status(**extra: str) -> int:
            response = httpx.post(
                f"http://{bound}/mcp", json=body, headers={**headers, **extra}, timeout=120
            )
            return response.status_code

        assert status(Host=f"evil.example:{port}") == 421
        assert status(Host=f"localhost:{port}") == 421  # not this address's name
        for origin in (
            "http://evil.example",
            f"http://127.0.0.2:{port}@evil.example",
            f"http://127.0.0.2:{port}.evil.example",
            "https://app.example.evil",
        ):
            assert status(Origin=origin) == 403, origin
        assert status() not in (403, 421)
        assert status(Origin=f"http://{bound}") not in (403, 421)
        assert status(Origin="https://app.example") not in (403, 421)
        # A name given with --allow-host is a Host and, with http:// or https://, an Origin.
        assert status(Host=f"memory.test:{port}") not in (403, 421)
        for origin in (f"http://memory.test:{port}", f"https://memory.test:{port}"):
            assert status(Origin=origin) not in (403, 421), origin
        assert status(Origin="http://memory.test") == 403

        async def listed() -> None:
            async with Client(f"http://{bound}/mcp") as client:
                assert {t.name for t in (await client.list_tools()).tools} == set(CORE_TOOLS)

        _run(listed())
    finally:
        child.terminate()
        child.wait(timeout=30)


def test_a_wildcard_bind_needs_the_names_clients_use(env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "graphmem", "mcp", "--transport", "http", "--host", "0.0.0.0"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and "--allow-host" in done.stderr


def test_a_call_with_too_many_messages_is_refused_and_stores_nothing(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    memory = AsyncMemory(test_settings, target=graph.target, embedder=embedder, ns=ns)
    options = McpOptions(namespace=ns, tools=tool_selection("all", read_only=False))
    server = build_server(memory, options)

    async def scenario() -> None:
        async with warm_memory(memory, server), Client(server) as client:
            many = [{"content": f"message {i}"} for i in range(1_001)]
            text = await _error(client, "add_messages", messages=many)
            assert "1,001 items in one call; at most 1,000" in text
            big = [{"content": "x" * 100_000} for _ in range(50)]
            text = await _error(client, "add_messages", messages=big)
            assert "bytes of text in one call" in text
            stats = await _call(client, "memory_stats")
            assert stats["episodes"] == 0

    _run(scenario())


def test_the_texts_a_model_reads_are_its_own_and_name_only_the_tools_there_are(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    from graphmem.mcp.guide import instructions, memory_guidelines

    core = tool_selection("core", read_only=False)
    for text in (instructions(core), memory_guidelines(core)):
        assert "resolve_contradiction" not in text and "retract_memory" not in text
        assert "delete_memory" not in text
    everything = tool_selection("all", read_only=False)
    assert "retract_memory" in memory_guidelines(everything)
    memory = AsyncMemory(test_settings, target=graph.target, embedder=embedder, ns=ns)
    server = build_server(memory, McpOptions(namespace=ns, tools=everything))

    async def scenario() -> None:
        async with warm_memory(memory, server), Client(server) as client:
            for listed in (await client.list_tools()).tools:
                assert "\n" not in (listed.description or ""), listed.name
            missing = await _error(client, "forget")
            assert missing == "InvalidInputError: forget: reason: a value is required"
            wrong = await _error(client, "add_memory", text="x", supersedes="not a list")
            assert wrong.startswith("InvalidInputError: add_memory: supersedes:")
            assert "pydantic" not in wrong and "http" not in wrong
            beliefs = await _call(client, "list_beliefs")  # as_of defaults to now
            assert beliefs["beliefs"] == []

    _run(scenario())


def test_http_needs_a_key_that_opens_the_namespace_and_allows_the_call(
    env: dict[str, str], ns: str
) -> None:
    import httpx

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"

    async def scenario() -> None:
        args = ["--tools", "all", "--allow-namespace", f"{ns}-b"]
        async with _http(env, args, port) as client:
            await _call(client, "add_memory", text="Cy plays the cello.", namespace=f"{ns}-b")
            # Opened by the key (a prefix) but not by this server.
            refused = await _error(client, "memory_stats", namespace=f"{ns}-c")
            assert "not open to this server" in refused
            ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            accept = {"Accept": "application/json, text/event-stream"}
            assert httpx.post(url, json=ping, headers=accept, timeout=120).status_code == 401
            async with keyed_client(url, env, "read") as reader:
                text = await _error(reader, "add_memory", text="Cy plays the viola.")
                assert "PermissionDeniedError" in text
                found = await _call(reader, "search_memories", query="cello", namespace=f"{ns}-b")
                assert [r["text"] for r in found["results"]] == ["Cy plays the cello."]

    _run(scenario())
