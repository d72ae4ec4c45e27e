"""Recall by speaker ("what did Alice say about the launch?") against the real Neo4j: through
the library (sync and async, on the search that filters inside the vector index and on the one
that filters after it, exact scoring included), `context`, a real `graphmem serve` with the
remote clients, the CLI and the MCP tool; facts, other speakers and the refusals stay out."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client as McpClient

from graphmem.cli import main
from graphmem.client import AsyncMemory, Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.errors import InvalidInputError
from graphmem.mcp.options import McpOptions
from graphmem.mcp.server import build_server, warm_memory
from graphmem.models import RecallResult
from graphmem.remote import AsyncRemoteMemory, RemoteMemory
from graphmem.settings import GraphmemSettings
from tests.helpers import cli_env
from tests.integration.conftest import Client
from tests.service import Served, new_key

QUESTION = "what about the launch?"
ALICE = [
    "I think we should move the launch to May.",
    "The launch needs two more weeks of testing first.",
]
#: Bob says far more, in words nearer the question's, so that the few lines of Alice are a
#: small share of what the indexes hold and none of the nearest entries.
BOB = [f"What about the launch? Checklist item {i} is done." for i in range(40)]
ASSISTANT = "The launch is on the calendar for April."
USER = "When is the launch?"
FACT = "The launch is planned for April."
#: Each index asked for as many entries as hits wanted (2), and no widening: where the filters
#: hide the vector index's entries (Bob's, the nearest), recall scores the namespace's visible
#: episodes exactly at once.
NARROW = {"vector_widen": (), "pool_min": 1, "pool_factor": 1, "candidates_min": 1, "overfetch": 1}


@dataclass(frozen=True)
class Conversation:
    ns: str
    alice: frozenset[str]
    bob: frozenset[str]
    assistant: str
    user: str
    fact: str


@pytest.fixture(scope="module")
def conversation(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> Conversation:
    """Alice and Bob talk about the launch (each message stored with its speaker), an
    assistant and a user without one, and one fact, in a namespace of the module's own."""
    ns = f"speakers-{uuid.uuid4().hex[:12]}"
    said = [
        *({"content": text, "speaker": "Alice"} for text in ALICE),
        *({"content": text, "speaker": "Bob", "role": "assistant"} for text in BOB),
        {"content": ASSISTANT, "role": "assistant"},
        {"content": USER},
    ]
    with Memory(test_settings, target=graph.target, embedder=embedder, ns=ns) as memory:
        stored = memory.ingest(said, session_id="planning", extract=False).episodes
        fact = memory.remember(FACT, pinned=True)
    ids = [e.id for e in stored]
    return Conversation(
        ns=ns,
        alice=frozenset(ids[: len(ALICE)]),
        bob=frozenset(ids[len(ALICE) : len(ALICE) + len(BOB)]),
        assistant=ids[-2],
        user=ids[-1],
        fact=fact.id,
    )


def _ids(result: RecallResult | dict[str, Any]) -> set[str]:
    hits = result.hits if isinstance(result, RecallResult) else result["hits"]
    return {h.id if not isinstance(h, dict) else h["id"] for h in hits}


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("path", ["server", "fallback"])
def test_recall_by_speaker_returns_only_their_messages(
    kind: str,
    path: str,
    conversation: Conversation,
    client_factory: Callable[..., Client],
) -> None:
    memory = client_factory(kind, ns=conversation.ns)
    # "server": the path this Neo4j takes (SEARCH ... WHERE where it has it); "fallback": the
    # search of the whole index, filtered after, forced.
    if path == "fallback":
        memory.raw._core.filtered_search = False
    everyone = memory.recall(QUESTION, k=50)
    assert conversation.bob & _ids(everyone) and conversation.fact in _ids(everyone)
    alice = memory.recall(QUESTION, speakers=["alice"])
    assert _ids(alice) == conversation.alice
    assert {h.episode.speaker for h in alice.hits if h.episode} == {"Alice"}
    # The index returns mostly Bob's lines: what is left is scored exactly, with the filter.
    exact = memory.recall(QUESTION, k=2, speakers="ALICE", config=NARROW)
    assert exact.exact_fallback and _ids(exact) == conversation.alice
    both = memory.recall(QUESTION, k=50, speakers=["Alice", "bob"], kinds=["episode"])
    assert _ids(both) == conversation.alice | conversation.bob
    # A message stored without a speaker is said by its role.
    assert _ids(memory.recall(QUESTION, speakers=["Assistant"])) == {conversation.assistant}
    assert _ids(memory.recall(QUESTION, speakers=["user"])) == {conversation.user}
    assert _ids(memory.recall(QUESTION, speakers=["Carol"])) == set()
    # context takes recall's options: Alice's lines alone, no pinned fact.
    block = memory.context(QUESTION, budget_tokens=2_000, speakers=["alice"])
    assert set(block.episode_ids) == conversation.alice and block.fact_ids == ()
    assert all(text in block.text for text in ALICE) and FACT not in block.text


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_speakers_that_could_match_nothing_are_refused(
    kind: str, client_factory: Callable[..., Client], ns: str
) -> None:
    memory = client_factory(kind, ns=ns)
    for options, words in (
        ({"speakers": []}, "speakers=[] would match no message"),
        ({"speakers": ["Alice"], "kinds": ["fact"]}, "kinds asks for facts only"),
        ({"speakers": ["Alice"], "tags": ["work"]}, "tags filter facts"),
        ({"speakers": [" "]}, "invalid speakers"),
        ({"speakers": [f"p{i}" for i in range(101)]}, "at most 100 names"),
    ):
        with pytest.raises(InvalidInputError, match=re.escape(words)):
            memory.recall(QUESTION, **options)
        with pytest.raises(InvalidInputError, match=re.escape(words)):
            memory.context(QUESTION, budget_tokens=500, **options)


def test_recall_by_speaker_through_the_server(
    served: Served, admin: Memory, conversation: Conversation
) -> None:
    key = new_key(admin, "read", namespaces=[conversation.ns]).key
    with RemoteMemory(served.url, key, ns=conversation.ns) as remote:
        assert _ids(remote.recall(QUESTION, speakers=["alice"])) == conversation.alice
        assert _ids(remote.recall(QUESTION, speakers="Alice")) == conversation.alice
        block = remote.context(QUESTION, budget_tokens=2_000, speakers=["ALICE"])
        assert set(block.episode_ids) == conversation.alice
        with pytest.raises(InvalidInputError, match="kinds asks for facts only"):
            remote.recall(QUESTION, speakers=["alice"], kinds=["fact"])
        with pytest.raises(InvalidInputError, match="would match no message"):
            remote.recall(QUESTION, speakers=[])

    async def remotely() -> set[str]:
        async with AsyncRemoteMemory(served.url, key, ns=conversation.ns) as remote:
            return _ids(await remote.recall(QUESTION, speakers=["alice"]))

    assert asyncio.run(remotely()) == conversation.alice


@pytest.fixture
def cli(
    graph: Graph, embedder: Embedder, conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Any]:
    """`graphmem ...` on the test graph, in the conversation's namespace; JSON output read."""
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    env = cli_env(graph, conversation.ns)

    def invoke(*args: str) -> Any:
        result = CliRunner().invoke(main, [*args, "--json"], env=env)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    return invoke


def test_the_cli_recalls_by_speaker(cli: Callable[..., Any], conversation: Conversation) -> None:
    assert _ids(cli("recall", QUESTION, "--speaker", "alice")) == conversation.alice
    repeated = cli("recall", QUESTION, "-k", "50", "--speaker", "Alice", "--speaker", "user")
    assert _ids(repeated) == conversation.alice | {conversation.user}
    block = cli("context", QUESTION, "--budget", "2000", "--speaker", "alice")
    assert set(block["episode_ids"]) == conversation.alice


def test_the_mcp_tool_searches_by_speaker(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, conversation: Conversation
) -> None:
    memory = AsyncMemory(test_settings, target=graph.target, embedder=embedder)
    server = build_server(memory, McpOptions(namespace=conversation.ns, full_ids=True))

    async def search(**arguments: Any) -> Any:
        async with warm_memory(memory, server), McpClient(server) as client:
            result = await client.call_tool("search_memories", {"query": QUESTION, **arguments})
            return result.is_error, result.content[0].text  # type: ignore[union-attr]

    failed, text = asyncio.run(search(speakers=["alice"]))
    assert not failed, text
    assert {r["id"] for r in json.loads(text)["results"]} == conversation.alice
    failed, text = asyncio.run(search(speakers=["alice"], kinds=["fact"]))
    assert failed and "kinds asks for facts only" in text
