"""LangChain on graphmem: the retriever answers with recall's hits, and a LangChain agent,
driven by a scripted chat model, remembers, updates, recalls and forgets through the tools."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from graphmem.integrations.langchain import GraphmemRetriever, memory_tools
from tests.integration.conftest import Client

pytestmark = pytest.mark.integration

Step = Callable[[list[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers each call with the next step of its script, a function of
    the messages so far (so that it can use the ids the tools answered with)."""

    steps: list[Step]
    done: list[int] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        message = self.steps[len(self.done)](messages)
        self.done.append(1)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self


def _call(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def _last_tool_answer(messages: list[BaseMessage]) -> str:
    answers = [m for m in messages if isinstance(m, ToolMessage)]
    return str(answers[-1].content)


def _id_in(text: str) -> str:
    found = re.search(r"[0-9a-f]{8}-[0-9a-f-]{27}", text)
    assert found, text
    return found.group(0)


def test_the_retriever_answers_with_recalls_hits(memory: Client, ns: str) -> None:
    fact = memory.remember("The user's sister lives in Lisbon", tags=["family"])
    memory.remember("The user plays the cello")
    retriever = GraphmemRetriever(memory=memory.raw, k=2, recall_options={"tags": ["family"]})
    query = "where does the user's sister live?"
    if memory.loop is None:
        documents = retriever.invoke(query)
    else:
        documents = memory.loop.run_until_complete(retriever.ainvoke(query))
    recalled = memory.recall(query, k=2, tags=["family"])
    assert [d.page_content for d in documents] == recalled.texts == [fact.text]
    assert documents[0].id == fact.id
    assert documents[0].metadata["score"] == pytest.approx(recalled.hits[0].score)
    assert documents[0].metadata | {"score": None} == {
        "id": fact.id,
        "kind": "fact",
        "score": None,
        "via": "search",
        "episode_ids": [],
        "ns": ns,
        "recorded_at": fact.recorded_at.isoformat(),
        "tags": ["family"],
        "source": None,
    }


def test_an_agent_remembers_updates_recalls_and_forgets_through_the_tools(
    memory: Client, ns: str
) -> None:
    script: list[Step] = [
        lambda _: _call("remember", text="The user works at Google"),
        lambda m: _call(
            "remember", text="The user works at Microsoft", replaces=[_id_in(_last_tool_answer(m))]
        ),
        lambda _: _call("recall", query="where does the user work?"),
        lambda m: AIMessage(content=_last_tool_answer(m)),
    ]
    agent = create_agent(ScriptedChatModel(steps=script), memory_tools(memory.raw))
    question: Any = {"messages": [("user", "I moved from Google to Microsoft")]}
    if memory.loop is None:
        state = agent.invoke(question)
    else:
        state = memory.loop.run_until_complete(agent.ainvoke(question))
    answer = str(state["messages"][-1].content)
    assert "The user works at Microsoft" in answer and "Google" not in answer
    current = _id_in(answer)
    history = memory.history(current)
    assert [f.text for f in history.facts] == [
        "The user works at Google",
        "The user works at Microsoft",
    ]
    assert [e.actor for e in history.edges] == ["langchain"]

    forget_it: list[Step] = [
        lambda _: _call("forget", id=current, reason="the user asked"),
        lambda _: _call("forget", id="no-such-id", reason="again"),
        lambda m: AIMessage(content=_last_tool_answer(m)),
    ]
    agent = create_agent(ScriptedChatModel(steps=forget_it), memory_tools(memory.raw))
    question = {"messages": [("user", "Forget where I work")]}
    if memory.loop is None:
        state = agent.invoke(question)
    else:
        state = memory.loop.run_until_complete(agent.ainvoke(question))
    tool_answers = [str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)]
    assert tool_answers[0] == "Erased 1 memories."
    assert tool_answers[1].startswith("NotFoundError")
    assert memory.recall("where does the user work?").hits == ()
