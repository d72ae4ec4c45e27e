"""graphmem as Google ADK's memory service: ``GraphmemMemoryService(memory)`` is a
``BaseMemoryService`` for ``Runner(memory_service=...)``, so ADK's ``load_memory`` and
``preload_memory`` tools search graphmem.

- ``add_session_to_memory`` and ``add_events_to_memory`` store the events' text verbatim as
  episodes (the event's id as the message's own id, so adding a session again stores only its
  new events);
- ``add_memory`` remembers each entry as a fact; an entry whose ``custom_metadata`` has
  ``supersedes`` (a list of fact ids) replaces those facts, which stay in their history;
- ``search_memory`` is recall, best first, each hit a ``MemoryEntry`` (its score, kind and
  session in ``custom_metadata``);
- ``delete_memory`` retracts a fact, or erases a message (``forget``).

Each (app, user) is one graphmem namespace: ``f"{app_name}:{user_id}"`` unless ``namespace``
says otherwise. ``memory`` is any graphmem client; writes through the library are attributed to
the actor ``google-adk``, through ``graphmem serve`` to the API key's name. Needs the
``google-adk`` extra (docs/guides/integrations/adk.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from graphmem.errors import ForgottenContentError
from graphmem.integrations._support import AnyClient, call_async, check_client, missing_extra
from graphmem.models import Fact
from graphmem.models.results import Hit

try:
    from google.adk.memory import BaseMemoryService
    from google.adk.memory.base_memory_service import SearchMemoryResponse
    from google.adk.memory.memory_entry import MemoryEntry
    from google.genai import types
except ImportError as exc:  # pragma: no cover - the extra is installed wherever tests run
    raise missing_extra("google-adk", "Google ADK", exc) from exc

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

#: Who the writes made through this adapter are attributed to (through the library).
ACTOR = "google-adk"


def default_namespace(app_name: str, user_id: str) -> str:
    """The graphmem namespace of an ADK app's user: ``app:user``."""
    return f"{app_name}:{user_id}"


def _text(content: types.Content | None) -> str | None:
    if content is None or not content.parts:
        return None
    text = "\n".join(part.text for part in content.parts if part.text and not part.thought)
    return text or None


def _message(event: Event) -> dict[str, Any] | None:
    """The event as a message for ``ingest``, or None when it carries no text."""
    text = _text(event.content)
    if text is None:
        return None
    return {
        "content": text,
        "role": "user" if event.author == "user" else "assistant",
        "speaker": event.author or None,
        "external_id": event.id or None,
        "occurred_at": datetime.fromtimestamp(event.timestamp, UTC),
    }


class GraphmemMemoryService(BaseMemoryService):
    """ADK's long-term memory on graphmem (see the module's documentation)."""

    def __init__(
        self,
        memory: AnyClient,
        *,
        k: int = 10,
        namespace: Callable[[str, str], str] = default_namespace,
    ) -> None:
        self.memory = check_client(memory)
        self.k = k
        self.namespace = namespace

    async def _call(self, method: str, /, **kwargs: Any) -> Any:
        return await call_async(self.memory, ACTOR, method, **kwargs)

    async def add_session_to_memory(self, session: Session) -> None:
        """Store the session's events (those with text) as episodes of session ``session.id``."""
        await self.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            events=session.events,
            session_id=session.id,
        )

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Store the events with text as episodes; those already stored are not stored twice,
        and those whose text this namespace erased are left out."""
        messages = [m for m in map(_message, events) if m is not None]
        ns = self.namespace(app_name, user_id)
        while messages:
            try:
                await self._call("ingest", messages=messages, ns=ns, session_id=session_id)
                return
            except ForgottenContentError as refused:
                # delete_memory erased these: like ADK's own services, never store them again
                messages = [m for i, m in enumerate(messages) if i not in refused.indexes]

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Remember each entry's text as a fact (``custom_metadata['supersedes']``: the ids of
        the facts it replaces)."""
        ns = self.namespace(app_name, user_id)
        for entry in memories:
            text = _text(entry.content)
            if text is None:
                continue
            supersedes = entry.custom_metadata.get("supersedes") or []
            await self._call(
                "remember", text=text, ns=ns, source=entry.author or ACTOR, supersedes=supersedes
            )

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """Recall over the user's facts and messages, at most ``k`` hits, best first."""
        result = await self._call(
            "recall", query=query, ns=self.namespace(app_name, user_id), k=self.k
        )
        return SearchMemoryResponse(memories=[_entry(hit) for hit in result.hits])

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Retract the fact ``memory_id`` (it stays in the audits), or erase the message
        ``memory_id`` (``forget``: a content-free tombstone stays)."""
        if not memory_id:
            return
        ns = self.namespace(app_name, user_id)
        found = await self._call("get", id=memory_id, ns=ns)
        reason = "deleted through Google ADK"
        if isinstance(found, Fact):
            await self._call("retract", id=memory_id, ns=ns, reason=reason)
        else:
            await self._call("forget", ids=[memory_id], ns=ns, reason=reason)


def _entry(hit: Hit) -> MemoryEntry:
    """A recall hit as ADK's ``MemoryEntry``."""
    episode = hit.episode
    said_by_user = episode is not None and episode.role == "user"
    author = (episode.speaker or episode.role) if episode is not None else "memory"
    when = hit.time
    return MemoryEntry(
        id=hit.id,
        content=types.Content(
            role="user" if said_by_user else "model", parts=[types.Part(text=hit.text)]
        ),
        author=author,
        timestamp=when.isoformat() if when is not None else None,
        custom_metadata={
            "kind": hit.kind,
            "score": hit.score,
            "session_id": episode.session_id if episode is not None else None,
        },
    )


__all__ = ["ACTOR", "GraphmemMemoryService", "default_namespace"]
