"""The OpenAI Agents SDK adapter: its tools called by a scripted run (the SDK's ScriptedModel,
no network, no LLM), the session that keeps the conversation as episodes, and the tools through
``graphmem serve``."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from agents import Agent, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.integrations.openai_agents import (
    ACTOR,
    GraphmemSession,
    memory_tools,
)
from graphmem.remote import RemoteMemory
from tests.integration.conftest import Client
from tests.service import Served, new_key

T = TypeVar("T")
NO_TRACES = RunConfig(tracing_disabled=True)


def run_on(memory: Client, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the loop an async client belongs to, or on a new one for a sync one."""
    if memory.loop is not None:
        return memory.loop.run_until_complete(coro)
    return asyncio.run(coro)


def tool_outputs(model: ScriptedModel) -> list[str]:
    """What the tools answered, as the model saw it in its last call."""
    assert model.last_call is not None
    return [
        item["output"]
        for item in model.last_call.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def supersede_then_recall(text: str, old_id: str, query: str) -> list[list[Any]]:
    """The model's first two turns: remember ``text`` in place of ``old_id``, then recall."""
    return [
        [function_call("remember", {"text": text, "supersedes": [old_id]}, call_id="c1")],
        [function_call("recall", {"query": query}, call_id="c2")],
    ]


def test_a_scripted_run_remembers_recalls_and_gets_context(memory: Client) -> None:
    old = memory.remember("The user's favourite colour is green.")
    model = ScriptedModel(
        [
            *supersede_then_recall(
                "The user's favourite colour is blue.", old.id, "favourite colour"
            ),
            [function_call("context", {"query": "What colour does the user like?"}, call_id="c3")],
            [assistant_message("Blue.")],
        ]
    )
    agent = Agent(name="assistant", model=model, tools=memory_tools(memory.raw, k=3))
    result = run_on(memory, Runner.run(agent, "I like blue now.", run_config=NO_TRACES))

    assert result.final_output == "Blue."
    model.assert_complete()
    remembered, recalled, context = tool_outputs(model)
    new_id = remembered.split()[2].rstrip(";")
    assert remembered == f"remembered as {new_id}; it supersedes {old.id}"
    assert f"[{new_id}]" in recalled and "blue" in recalled.splitlines()[0]
    assert "green" not in recalled  # the superseded fact is hidden
    assert "blue" in context and "green" not in context

    fact = memory.get(new_id)
    assert fact.source == ACTOR
    history = memory.history(new_id)
    (edge,) = history.edges
    assert (edge.newer_id, edge.older_id, edge.actor) == (new_id, old.id, ACTOR)
    assert memory.get(old.id).status == "superseded"


def test_the_tools_tell_the_model_what_went_wrong(memory: Client) -> None:
    model = ScriptedModel(
        [
            [function_call("remember", {"text": "x", "supersedes": ["no-such-id"]}, call_id="c")],
            [assistant_message("ok")],
        ]
    )
    agent = Agent(name="assistant", model=model, tools=memory_tools(memory.raw))
    run_on(memory, Runner.run(agent, "go", run_config=NO_TRACES))
    (answer,) = tool_outputs(model)
    assert "no-such-id" in answer
    assert memory.stats().facts_by_status.get("active", 0) == 0


def test_the_session_keeps_the_conversation_as_episodes(memory: Client) -> None:
    session = GraphmemSession(memory.raw, "conversation-1")
    model = ScriptedModel(
        [
            [assistant_message("Nice to meet you, Ada.", item_id="m1")],
            [assistant_message("You said your name is Ada.", item_id="m2")],
        ]
    )
    agent = Agent(name="assistant", model=model)
    run_on(memory, Runner.run(agent, "My name is Ada.", session=session, run_config=NO_TRACES))
    run_on(memory, Runner.run(agent, "What is my name?", session=session, run_config=NO_TRACES))

    # The SDK replays the conversation from the session: the second call saw the first turn.
    assert model.last_call is not None
    assert any("My name is Ada." in str(item) for item in model.last_call.input)
    items = run_on(memory, session.get_items())
    assert len(items) == 4

    # min_score 0: every stored message, not only those about the question
    hits = memory.recall("What is the user's name?", kinds=["episode"], k=10, min_score=0).hits
    said = {(h.episode.role, h.text) for h in hits if h.episode is not None}
    assert ("user", "My name is Ada.") in said
    assert ("assistant", "Nice to meet you, Ada.") in said
    assert {h.episode.session_id for h in hits if h.episode is not None} == {"conversation-1"}
    assert memory.stats().episodes == 4

    popped = run_on(memory, session.pop_item())
    assert popped is not None and "Ada" in str(popped)
    assert len(run_on(memory, session.get_items())) == 3
    assert memory.stats().episodes == 4  # graphmem is append-only: the episode stays


def test_the_tools_through_graphmem_serve_act_as_the_key(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    with RemoteMemory(served.url, key.key, ns=ns) as remote:
        old = remote.remember("The office is in Porto.")
        model = ScriptedModel(
            [
                *supersede_then_recall("The office is in Lisbon.", old.id, "Where is the office?"),
                [assistant_message("Lisbon.")],
            ]
        )
        agent = Agent(name="assistant", model=model, tools=memory_tools(remote))
        asyncio.run(Runner.run(agent, "We moved.", run_config=NO_TRACES))
        remembered, recalled = tool_outputs(model)
        new_id = remembered.split()[2].rstrip(";")
        assert "Lisbon" in recalled.splitlines()[0]
        (edge,) = remote.history(new_id).edges
    assert edge.actor == key.api_key.name  # through serve, the key is the actor


@pytest.mark.parametrize("bad", ["not a client", None])
def test_a_client_is_required(bad: object) -> None:
    from graphmem.errors import ClientUsageError

    with pytest.raises(ClientUsageError, match="graphmem client"):
        memory_tools(bad)  # type: ignore[arg-type]
