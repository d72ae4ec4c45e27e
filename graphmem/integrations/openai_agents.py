"""graphmem for the OpenAI Agents SDK: function tools (``remember``, ``recall``, ``context``) and
a ``Session`` that also keeps the conversation as episodes.

    from graphmem.integrations.openai_agents import GraphmemSession, memory_tools

    agent = Agent(name="assistant", tools=memory_tools(memory))
    await Runner.run(agent, "hi", session=GraphmemSession(memory, "conversation-1"))

``memory`` is any graphmem client (``Memory``, ``AsyncMemory``, ``RemoteMemory``,
``AsyncRemoteMemory``); a sync one runs in a worker thread. Writes through the library are
attributed to the actor ``openai-agents``; through ``graphmem serve`` to the API key's name.
Needs the ``openai-agents`` extra (docs/guides/integrations/openai_agents.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from graphmem.errors import GraphmemError
from graphmem.integrations._support import AnyClient, call_async, check_client, missing_extra

try:
    from agents import RunContextWrapper, SQLiteSession, Tool, function_tool
    from agents.items import TResponseInputItem
    from agents.memory import Session, SessionSettings
    from agents.tool import default_tool_error_function
except ImportError as exc:  # pragma: no cover - the extra is installed wherever tests run
    raise missing_extra("openai-agents", "OpenAI Agents SDK", exc) from exc

#: Who the writes made through this adapter are attributed to (through the library).
ACTOR = "openai-agents"

_ROLES = frozenset({"user", "assistant", "system", "developer"})


def memory_tools(
    memory: AnyClient,
    *,
    ns: str | None = None,
    k: int = 5,
    budget_tokens: int = 800,
    source: str = ACTOR,
) -> list[Tool]:
    """The tools ``remember``, ``recall`` and ``context`` over ``memory`` in namespace ``ns``
    (the client's own by default). ``remember`` may name the ids of facts the new one replaces
    (``supersedes``): they are retired, not overwritten, so their history stays. ``recall``
    answers up to ``k`` hits, one a line with its id and score; ``context`` a prompt-ready block
    within ``budget_tokens``. The facts written carry ``source``."""
    client = check_client(memory)

    async def remember(text: str, supersedes: list[str] | None = None) -> str:
        """Store a fact about the user or the task for later conversations.

        Args:
            text: The fact, as one self-contained sentence.
            supersedes: Ids (from recall) of facts this one updates or corrects, if any.
        """
        fact = await call_async(
            client, ACTOR, "remember", text=text, ns=ns, source=source, supersedes=supersedes or []
        )
        replaced = f"; it supersedes {', '.join(supersedes)}" if supersedes else ""
        return f"remembered as {fact.id}{replaced}"

    async def recall(query: str) -> str:
        """Search long-term memory for what is believed now, best first.

        Args:
            query: What to look for, as a question or keywords.
        """
        result = await call_async(client, ACTOR, "recall", query=query, ns=ns, k=k)
        if not result.hits:
            return "nothing found"
        return "\n".join(f"[{hit.id}] ({hit.score:.2f}) {hit.text}" for hit in result.hits)

    async def context(query: str) -> str:
        """A block of what memory holds that bears on the query: pinned facts first.

        Args:
            query: The topic or question the block is for.
        """
        block = await call_async(
            client, ACTOR, "context", query=query, ns=ns, budget_tokens=budget_tokens
        )
        return str(block.text)

    return [
        function_tool(tool, failure_error_function=_tool_error)
        for tool in (remember, recall, context)
    ]


def _tool_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model reads when a tool fails: graphmem's own error (a refused input, an
    unknown id), so that it can correct the call; for anything else the SDK's generic text."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, GraphmemError):
        cause = cause.__cause__
    if cause is None:
        return default_tool_error_function(ctx, error)
    return f"graphmem refused the call ({type(cause).__name__}): {cause}"


def _text(item: Mapping[str, Any]) -> str | None:
    """The text of a message item (a string, or its text parts joined), else None."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = [p.get("text") for p in content if isinstance(p, Mapping)]
    texts = [t for t in parts if isinstance(t, str) and t]
    return "\n".join(texts) or None


class GraphmemSession:
    """An Agents SDK ``Session`` whose conversation is also stored in graphmem as episodes.

    The items the SDK replays come from ``history`` (by default an in-memory ``SQLiteSession``
    of the same id; pass a file-backed one to keep them across processes). Each message item
    added (user, assistant, system or developer text; tool calls and their outputs are left
    out) is also ingested verbatim into namespace ``ns`` as an episode of session
    ``session_id``, so ``recall`` and ``context`` find it in later conversations. graphmem is
    append-only: ``pop_item`` and ``clear_session`` change what the SDK replays, not the
    episodes; erase those with ``memory.forget(session=session_id, reason=...)``.
    """

    def __init__(
        self,
        memory: AnyClient,
        session_id: str,
        *,
        ns: str | None = None,
        history: Session | None = None,
    ) -> None:
        self.memory = check_client(memory)
        self.session_id = session_id
        self.ns = ns
        self.history: Session = history if history is not None else SQLiteSession(session_id)
        self.session_settings: SessionSettings | None = self.history.session_settings

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation so far (the latest ``limit`` items, in order), from ``history``."""
        return await self.history.get_items(limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add the items to ``history`` and their messages to graphmem as episodes."""
        await self.history.add_items(items)
        now = datetime.now(UTC)
        messages = []
        for item in items:
            raw: Mapping[str, Any] = item
            text = _text(raw)
            role = raw.get("role")
            if text is None or role not in _ROLES or raw.get("type", "message") != "message":
                continue
            message = {
                "content": text,
                "role": "system" if role == "developer" else role,
                "occurred_at": now,
                "external_id": uuid.uuid4().hex,
            }
            if raw.get("id"):
                message["metadata"] = {"item_id": raw["id"]}
            messages.append(message)
        if messages:
            await call_async(
                self.memory,
                ACTOR,
                "ingest",
                messages=messages,
                ns=self.ns,
                session_id=self.session_id,
            )

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the latest item of ``history`` (its episode stays)."""
        return await self.history.pop_item()

    async def clear_session(self) -> None:
        """Clear ``history`` (the episodes stay: see the class's note on erasure)."""
        await self.history.clear_session()


__all__ = ["ACTOR", "GraphmemSession", "memory_tools"]
