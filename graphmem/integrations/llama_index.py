"""LlamaIndex on graphmem: :class:`GraphmemMemoryBlock`, a long-term memory block for
``llama_index.core.memory.Memory``.

When the memory is read, the block asks graphmem's ``context`` for what bears on the latest
messages (pinned facts first, then what recall finds, within ``budget_tokens``) and returns
it as the block's text; when the short-term memory flushes messages, the block stores them in
graphmem verbatim as episodes (``ingest``, in the memory's session), from which a client with
an extractor derives facts. It takes a graphmem client (``Memory``, ``AsyncMemory``,
``RemoteMemory`` or ``AsyncRemoteMemory``); a sync one is called in a worker thread, an async
one must be the one of the running loop (use ``await memory.aget()``). Writes are attributed
to ``actor`` (``llama-index``); through ``graphmem serve`` the actor is the API key's name. See
``docs/guides/integrations/llama_index.md``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from graphmem.integrations._support import Call, Steps, missing_extra, run_async
from graphmem.models import MAX_TEXT_CHARS

try:
    from llama_index.core.base.llms.types import ChatMessage, TextBlock
    from llama_index.core.memory.memory import BaseMemoryBlock
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise missing_extra("llama-index", "LlamaIndex", exc) from exc

#: LlamaIndex's message roles as graphmem's (user, assistant, system, tool).
ROLES = {"developer": "system", "function": "tool", "chatbot": "assistant", "model": "assistant"}


def message_text(message: ChatMessage) -> str:
    """The text of a chat message: its text blocks, joined."""
    return "".join(b.text for b in message.blocks if isinstance(b, TextBlock))


def _context(query: str, options: dict[str, Any]) -> Steps[str]:
    block = yield Call("context", {"query": query, **options})
    return str(block.text) if block.fact_ids or block.episode_ids else ""


def _ingest(batches: dict[str | None, list[dict[str, Any]]], ns: str | None) -> Steps[int]:
    stored = 0
    for session, messages in batches.items():
        result = yield Call("ingest", {"messages": messages, "ns": ns, "session_id": session})
        stored += result.created
    return stored


class GraphmemMemoryBlock(BaseMemoryBlock[str]):
    """graphmem as a long-term memory block (see the module's docstring). ``ns`` is the
    namespace (default: the client's), ``budget_tokens`` the size of the block,
    ``context_window`` how many of the latest messages make the query, ``context_options``
    any other option of ``context`` (``tags``, ``pinned_limit``, ...), and ``store_messages``
    whether flushed messages are stored."""

    name: str = Field(default="graphmem", description="The name of the memory block.")
    memory: Any = Field(description="The graphmem client.")
    ns: str | None = Field(default=None, description="The graphmem namespace.")
    budget_tokens: int = Field(default=500, description="The block's size, in tokens.")
    context_window: int = Field(default=5, description="The latest messages the query reads.")
    context_options: dict[str, Any] = Field(default_factory=dict)
    store_messages: bool = Field(default=True, description="Store flushed messages as episodes.")
    actor: str = Field(default="llama-index", description="Who the writes are attributed to.")

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """What graphmem knows that bears on the latest messages ('' when nothing does)."""
        latest = (messages or [])[-self.context_window :] if self.context_window > 0 else []
        query = " ".join(t for t in (message_text(m).strip() for m in latest) if t)
        if not query:
            return ""
        options = {"ns": self.ns, "budget_tokens": self.budget_tokens, **self.context_options}
        return await run_async(self.memory, _context(query[-MAX_TEXT_CHARS:], options), self.actor)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Store the messages the short-term memory let go of, verbatim, per session."""
        if not self.store_messages:
            return
        batches: dict[str | None, list[dict[str, Any]]] = {}
        for message in messages:
            text = message_text(message)
            if not text.strip():
                continue
            role = str(getattr(message.role, "value", message.role))
            session = message.additional_kwargs.get("session_id")
            batches.setdefault(session, []).append({"content": text, "role": ROLES.get(role, role)})
        if batches:
            await run_async(self.memory, _ingest(batches, self.ns), self.actor)


__all__ = ["GraphmemMemoryBlock", "message_text"]
