"""The Google ADK adapter: ADK's memory service adding a session and finding it, an ADK agent
whose scripted model (no network, no LLM) calls ADK's ``load_memory`` tool over it, facts added
and superseded through it, and deletion."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from pydantic import Field

os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("ADK_DISABLE_TELEMETRY", "true")

from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService, Session
from google.adk.tools.load_memory_tool import load_memory_tool
from google.genai import types

from graphmem.client.graph import Graph
from graphmem.integrations.adk import ACTOR, GraphmemMemoryService
from tests.helpers import cli_env
from tests.integration.conftest import Client

APP = "travel"


class ScriptedLlm(BaseLlm):
    """Answers each model call with the next of ``script``, and keeps the requests."""

    model: str = "scripted"
    script: list[LlmResponse] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        yield self.script.pop(0)


def said(role: str, text: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])


def run(memory: Client, coro: Any) -> Any:
    if memory.loop is not None:
        return memory.loop.run_until_complete(coro)
    return asyncio.run(coro)


async def a_session(sessions: InMemorySessionService, user: str) -> Session:
    session = await sessions.create_session(app_name=APP, user_id=user)
    for author, text in [
        ("user", "I moved to Lisbon last week."),
        ("planner", "Noted: you live in Lisbon now."),
    ]:
        role = "user" if author == "user" else "model"
        event = Event(author=author, invocation_id="i1", content=said(role, text))
        await sessions.append_event(session, event)
    return session


def test_the_memory_service_adds_a_session_and_finds_it(memory: Client) -> None:
    user = f"u{uuid.uuid4().hex[:8]}"
    service = GraphmemMemoryService(memory.raw)
    sessions = InMemorySessionService()

    async def scenario() -> Any:
        session = await a_session(sessions, user)
        await service.add_session_to_memory(session)
        await service.add_session_to_memory(session)  # added again: nothing stored twice
        found = await service.search_memory(app_name=APP, user_id=user, query="Where do I live?")
        other = await service.search_memory(app_name=APP, user_id="someone-else", query="Lisbon")
        return session, found, other

    session, found, other = run(memory, scenario())
    ns = f"{APP}:{user}"
    assert memory.stats(ns=ns).episodes == 2
    first = found.memories[0]
    assert "Lisbon" in first.content.parts[0].text
    assert first.custom_metadata["session_id"] == session.id
    assert {(m.author, m.content.role) for m in found.memories} == {
        ("user", "user"),
        ("planner", "model"),
    }
    assert first.timestamp is not None
    assert other.memories == []  # each (app, user) is a namespace of its own


def test_an_agent_loads_memory_through_the_service(memory: Client) -> None:
    user = f"u{uuid.uuid4().hex[:8]}"
    service = GraphmemMemoryService(memory.raw)
    sessions = InMemorySessionService()
    call = types.FunctionCall(name="load_memory", args={"query": "Where does the user live?"})
    model = ScriptedLlm(
        script=[
            LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)])
            ),
            LlmResponse(content=said("model", "You live in Lisbon.")),
        ]
    )
    agent = LlmAgent(name="planner", model=model, tools=[load_memory_tool])
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=service)

    async def scenario() -> list[Event]:
        await service.add_session_to_memory(await a_session(sessions, user))
        later = await sessions.create_session(app_name=APP, user_id=user)
        message = said("user", "Where do I live?")
        return [
            event
            async for event in runner.run_async(
                user_id=user, session_id=later.id, new_message=message
            )
        ]

    events = run(memory, scenario())
    assert events[-1].content is not None
    assert events[-1].content.parts[0].text == "You live in Lisbon."
    responses = [
        part.function_response
        for content in model.requests[-1].contents
        for part in content.parts or []
        if part.function_response is not None
    ]
    assert len(responses) == 1 and "I moved to Lisbon last week." in str(responses[0].response)


def test_added_memories_supersede_and_deletes_retract_or_erase(
    memory: Client, graph: Graph
) -> None:
    user = f"u{uuid.uuid4().hex[:8]}"
    ns = f"{APP}:{user}"
    service = GraphmemMemoryService(memory.raw)
    sessions = InMemorySessionService()
    old = memory.remember("The user's seat preference is aisle.", ns=ns)
    entry = MemoryEntry(
        content=said("user", "The user's seat preference is window."),
        custom_metadata={"supersedes": [old.id]},
    )

    async def scenario() -> tuple[Any, Session]:
        await service.add_memory(app_name=APP, user_id=user, memories=[entry])
        found = await service.search_memory(app_name=APP, user_id=user, query="seat preference")
        session = await a_session(sessions, user)
        await service.add_session_to_memory(session)
        return found, session

    found, session = run(memory, scenario())
    new = found.memories[0]
    assert new.content.parts[0].text == "The user's seat preference is window."
    (edge,) = memory.history(new.id or "", ns=ns).edges
    assert (edge.older_id, edge.actor) == (old.id, ACTOR)
    if memory.loop is None:  # the command line shows the same edge (the client is no matter)
        shown = subprocess.run(
            [sys.executable, "-m", "graphmem", "history", new.id or "", "--ns", ns, "--json"],
            env={**os.environ, **cli_env(graph)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert shown.returncode == 0, shown.stderr
        (shown_edge,) = json.loads(shown.stdout)["edges"]
        assert (shown_edge["older_id"], shown_edge["actor"]) == (old.id, ACTOR)

    lisbon = next(
        m
        for m in run(
            memory, service.search_memory(app_name=APP, user_id=user, query="moved to Lisbon")
        ).memories
        if m.custom_metadata["kind"] == "episode"
    )
    run(memory, service.delete_memory(app_name=APP, user_id=user, memory_id=lisbon.id))
    run(memory, service.delete_memory(app_name=APP, user_id=user, memory_id=new.id))
    assert memory.get(new.id or "", ns=ns).status == "retracted"
    assert memory.stats(ns=ns).episodes == 1  # the message was erased
    run(memory, service.add_session_to_memory(session))  # the erased one is not stored again
    assert memory.stats(ns=ns).episodes == 1
