"""LangChain on graphmem: :class:`GraphmemRetriever`, a ``BaseRetriever`` over recall, and
:func:`memory_tools`, the tools ``remember``, ``recall`` and ``forget`` for an agent.

Both take a graphmem client (``Memory``, ``AsyncMemory``, ``RemoteMemory`` or
``AsyncRemoteMemory``): a sync one serves ``invoke`` and ``ainvoke`` (the latter in a worker
thread), an async one ``ainvoke`` only. Writes are attributed to ``actor`` (``langchain``);
through ``graphmem serve`` the actor is the API key's name. See
``docs/guides/integrations/langchain.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from graphmem.errors import GraphmemError
from graphmem.integrations._support import Call, Steps, missing_extra, run_async, run_sync
from graphmem.models import Hit

if TYPE_CHECKING:
    from graphmem.integrations._support import AnyClient

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise missing_extra("langchain", "LangChain", exc) from exc

ACTOR = "langchain"


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """What a hit's ``Document`` carries besides its text: the id, kind, scores, times and
    provenance (the episodes it came from)."""
    metadata: dict[str, Any] = {
        "id": hit.id,
        "kind": hit.kind,
        "score": hit.score,
        "via": hit.via,
        "episode_ids": list(hit.provenance.episode_ids),
    }
    if hit.fact is not None:
        metadata |= {
            "ns": hit.fact.ns,
            "recorded_at": hit.fact.recorded_at.isoformat(),
            "tags": list(hit.fact.tags),
            "source": hit.fact.source,
        }
    if hit.episode is not None:
        metadata |= {
            "ns": hit.episode.ns,
            "role": hit.episode.role,
            "speaker": hit.episode.speaker,
            "session_id": hit.episode.session_id,
            "recorded_at": hit.episode.recorded_at.isoformat(),
        }
    return metadata


def _documents(query: str, options: Mapping[str, Any]) -> Steps[list[Document]]:
    result = yield Call("recall", {"query": query, **options})
    return [Document(page_content=h.text, metadata=hit_metadata(h), id=h.id) for h in result.hits]


class GraphmemRetriever(BaseRetriever):
    """The hits of graphmem's recall as LangChain ``Document`` objects, best first: the text
    as ``page_content``, the id, kind, score and provenance in ``metadata``
    (:func:`hit_metadata`). ``ns`` is the namespace (default: the client's), ``k`` the most
    hits, ``recall_options`` any other recall option (``kinds``, ``tags``, ``as_of``, ...)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    ns: str | None = None
    k: int = 4
    recall_options: dict[str, Any] = Field(default_factory=dict)
    actor: str = ACTOR

    def _options(self) -> dict[str, Any]:
        return {"ns": self.ns, "k": self.k, **self.recall_options}

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return run_sync(self.memory, _documents(query, self._options()), self.actor)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return await run_async(self.memory, _documents(query, self._options()), self.actor)


# --- the tools ----------------------------------------------------------------------------------
class RememberArgs(BaseModel):
    text: str = Field(description="One self-contained statement to remember.")
    replaces: list[str] = Field(
        default_factory=list,
        description="Ids of remembered facts (from recall) that this statement updates: they "
        "are superseded, and their history kept.",
    )


class RecallArgs(BaseModel):
    query: str = Field(description="What to look for, in words.")


class ForgetArgs(BaseModel):
    id: str = Field(description="The id of the fact to erase for good (from recall).")
    reason: str = Field(description="Why it must be erased, such as the user's request.")


def _remember(ns: str | None, text: str, replaces: list[str]) -> Steps[str]:
    fields: dict[str, Any] = {"ns": ns, "source": ACTOR}
    if replaces:
        fields |= {"supersedes": replaces, "reason": "updated by the agent"}
    fact = yield Call("remember", {"text": text, **fields})
    return f"Remembered as {fact.id}" + (f", replacing {', '.join(replaces)}." if replaces else ".")


def _recall(ns: str | None, k: int, query: str) -> Steps[str]:
    result = yield Call("recall", {"query": query, "ns": ns, "k": k})
    if not result.hits:
        return "Nothing remembered matches."
    return "\n".join(f"- {h.text} (id {h.id}, score {h.score:.2f})" for h in result.hits)


def _forget(ns: str | None, id: str, reason: str) -> Steps[str]:
    done = yield Call("forget", {"ids": [id], "reason": reason, "ns": ns})
    answer = f"Erased {len(done.facts) + len(done.episodes)} memories."
    if done.already_forgotten:
        answer += f" Erased before: {', '.join(done.already_forgotten)}."
    return answer


def _tool(
    memory: Any,
    actor: str,
    name: str,
    description: str,
    schema: type[BaseModel],
    steps: Callable[..., Steps[str]],
) -> BaseTool:
    """A tool that carries out ``steps(**args)`` with ``memory``; graphmem's errors come back
    to the agent as the tool's answer."""

    def call(**args: Any) -> str:
        try:
            return run_sync(memory, steps(**args), actor)
        except GraphmemError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc

    async def acall(**args: Any) -> str:
        try:
            return await run_async(memory, steps(**args), actor)
        except GraphmemError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc

    return StructuredTool(
        name=name,
        description=description,
        args_schema=schema,
        func=call,
        coroutine=acall,
        handle_tool_error=True,
    )


def memory_tools(
    memory: AnyClient, *, ns: str | None = None, k: int = 5, actor: str = ACTOR
) -> list[BaseTool]:
    """The tools ``remember``, ``recall`` and ``forget`` over ``memory`` in namespace ``ns``
    (default: the client's); ``recall`` answers with at most ``k`` memories, each with its id,
    which ``remember``'s ``replaces`` and ``forget`` take. ``forget`` is graphmem's erasure."""
    return [
        _tool(
            memory,
            actor,
            "remember",
            "Store a fact about the user or the task in long-term memory. To update something "
            "remembered, give the ids of the old facts in `replaces`.",
            RememberArgs,
            lambda text, replaces=(): _remember(ns, text, list(replaces)),
        ),
        _tool(
            memory,
            actor,
            "recall",
            "Search long-term memory; answers with the matching memories and their ids.",
            RecallArgs,
            lambda query: _recall(ns, k, query),
        ),
        _tool(
            memory,
            actor,
            "forget",
            "Erase a remembered fact for good, by its id (only when the user asks for it).",
            ForgetArgs,
            lambda id, reason: _forget(ns, id, reason),
        ),
    ]


__all__ = ["GraphmemRetriever", "hit_metadata", "memory_tools"]
