"""LlamaIndex on graphmem: the memory block puts a stored fact into the memory's context, and
the messages the short-term memory flushes are stored as episodes of its session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory

from graphmem.integrations.llama_index import GraphmemMemoryBlock
from tests.integration.conftest import Client

pytestmark = pytest.mark.integration


def _words(text: str) -> list[str]:
    return text.split()  # LlamaIndex's default tokenizer would download its vocabulary


def _run(memory: Client, llama: LlamaMemory, method: str, *args: Any) -> Any:
    """The LlamaIndex memory's sync method with a sync client, its async one (on the client's
    loop) with an async client."""
    if memory.loop is None:
        return getattr(llama, method)(*args)
    return memory.loop.run_until_complete(getattr(llama, "a" + method)(*args))


def test_the_block_brings_a_stored_fact_into_the_context(memory: Client, ns: str) -> None:
    fact = memory.remember("The user's dog is called Rex")
    memory.remember("The user's favourite colour is green")
    block = GraphmemMemoryBlock(memory=memory.raw, budget_tokens=200)
    llama = LlamaMemory.from_defaults(
        session_id=f"chat-{ns}", memory_blocks=[block], tokenizer_fn=_words
    )
    _run(memory, llama, "put", ChatMessage(role="user", content="What is my dog called?"))
    messages = _run(memory, llama, "get")
    assert [m.role.value for m in messages] == ["system", "user"]
    system = messages[0].content
    assert "<graphmem>" in system and "Rex" in system
    assert fact.id[:8] in system
    # No message to go on, nothing asked and nothing shown.
    assert asyncio.run(block.aget([])) == ""


def test_flushed_messages_are_stored_as_episodes_of_the_session(memory: Client, ns: str) -> None:
    block = GraphmemMemoryBlock(memory=memory.raw)
    session = f"chat-{ns}"
    llama = LlamaMemory.from_defaults(
        session_id=session,
        memory_blocks=[block],
        tokenizer_fn=_words,
        token_limit=40,
        chat_history_token_ratio=0.5,
        token_flush_size=10,
    )
    said = [
        ChatMessage(role="user", content="I have a new job at the harbour office in Porto"),
        ChatMessage(role="assistant", content="Congratulations on the new job in Porto"),
        ChatMessage(role="user", content="I start on Monday and I will take the tram to work"),
        ChatMessage(role="assistant", content="The tram sounds like a pleasant way to commute"),
    ]
    for message in said:
        _run(memory, llama, "put", message)
    stats = memory.stats()
    assert stats.episodes >= 2 and stats.sessions == 1
    hits = memory.recall("new job in Porto", kinds=["episode"]).hits
    assert hits and hits[0].episode is not None
    assert hits[0].episode.session_id == session
    assert {h.episode.role for h in hits if h.episode} <= {"user", "assistant"}
