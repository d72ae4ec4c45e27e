"""graphmem as CrewAI's memory storage: ``GraphmemStorage(memory)`` is a ``StorageBackend`` for
``crewai.Memory`` (CrewAI 1.10 and later).

    storage = GraphmemStorage(memory)
    crew_memory = crewai.Memory(storage=storage, embedder=storage.embedder, llm=...)

- **Scopes are namespaces.** CrewAI's scope ``/`` is the namespace ``crewai`` (the ``prefix``)
  and ``/project/alpha`` is ``crewai:project:alpha``; a scope's segments take the characters a
  namespace takes, less ``:`` (letters, digits, ``. _ - @``). A search, count or listing under
  a scope covers the namespaces of its sub-scopes.
- **Records are facts.** ``content`` is the text, ``categories`` the tags, ``importance``
  graphmem's importance, ``source`` the source, ``metadata`` (with ``private``) the metadata. A
  record's id is ``<namespace>/<fact id>``.
- **graphmem ranks.** ``search`` is recall on the query's text; ``storage.embedder`` stands in
  for CrewAI's embedder and keeps the text of each vector it makes, so that ``search`` can tell
  recall the text it was asked. Its vectors are a hash of the text, not a language model's
  (no network, no API key): CrewAI compares them only to drop exact repeats in one batch. The
  score is recall's cosine similarity of the text to the query.
- **Updates supersede, deletes retract.** ``update`` remembers the new content with
  ``supersedes`` (the earlier text stays in ``graphmem history``); ``delete`` and ``reset``
  retract (out of recall, still in the audits). To erase for real, ``memory.forget``.

``memory`` must be a sync client (``Memory`` or ``RemoteMemory``): CrewAI calls its storage from
its own threads, and its async methods run the sync ones in a worker thread. Writes through the
library are attributed to the actor ``crewai``, through ``graphmem serve`` to the API key's name.
Needs the ``crewai`` extra (docs/guides/integrations/crewai.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from graphmem.client.api_aio import AsyncMemoryAPI
from graphmem.client.api_sync import MemoryAPI
from graphmem.errors import ClientUsageError, InvalidInputError, NotFoundError
from graphmem.integrations._support import call_sync, missing_extra
from graphmem.models import Episode, Fact

try:
    from crewai.memory.types import MemoryRecord, ScopeInfo
except ImportError as exc:  # pragma: no cover - the extra is installed where its tests run
    raise missing_extra("crewai", "CrewAI", exc) from exc

#: Who the writes made through this adapter are attributed to (through the library).
ACTOR = "crewai"
#: The size of :attr:`GraphmemStorage.embedder`'s vectors.
DIMENSION = 64
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]*")
_PRIVATE = "crewai_private"
_REASON = "through CrewAI"


class TextKeyedEmbedder:
    """CrewAI's embedder for :class:`GraphmemStorage`: a vector per text (a hash of it, so equal
    texts get equal vectors), remembering the text of the last ``size`` vectors."""

    def __init__(self, size: int = 4096) -> None:
        self._texts: OrderedDict[tuple[float, ...], str] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def __call__(self, input: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in input]

    def _vector(self, text: str) -> list[float]:
        bits = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[: DIMENSION // 8])
        scale = DIMENSION**-0.5
        vector = [scale if bits >> i & 1 else -scale for i in range(DIMENSION)]
        with self._lock:
            self._texts[tuple(vector)] = text
            self._texts.move_to_end(tuple(vector))
            while len(self._texts) > self._size:
                self._texts.popitem(last=False)
        return vector

    def text_of(self, vector: Sequence[float]) -> str:
        """The text ``vector`` was made from."""
        with self._lock:
            text = self._texts.get(tuple(float(x) for x in vector))
        if text is None:
            raise ClientUsageError(
                "GraphmemStorage searches by text: give crewai.Memory the storage's embedder "
                "(crewai.Memory(storage=storage, embedder=storage.embedder))"
            )
        return text


class GraphmemStorage:
    """CrewAI's ``StorageBackend`` on graphmem (see the module's documentation)."""

    def __init__(self, memory: MemoryAPI, *, prefix: str = "crewai") -> None:
        if not isinstance(memory, MemoryAPI):
            kind = "an async client" if isinstance(memory, AsyncMemoryAPI) else "not a client"
            raise ClientUsageError(
                f"GraphmemStorage takes Memory or RemoteMemory: {type(memory).__name__} is {kind}"
            )
        self.memory = memory
        self.prefix = prefix
        self.embedder = TextKeyedEmbedder()

    # --- scopes and namespaces ----------------------------------------------------------------
    def namespace(self, scope: str | None) -> str:
        """The graphmem namespace of CrewAI scope ``scope`` (``/`` or None: the prefix)."""
        segments = [s for s in (scope or "/").split("/") if s]
        for segment in segments:
            if not _SEGMENT.fullmatch(segment):
                raise InvalidInputError(
                    f"CrewAI scope {scope!r}: segment {segment!r} must be letters, digits and "
                    ". _ - @, starting with a letter or digit, to name a graphmem namespace"
                )
        return ":".join([self.prefix, *segments])

    def scope(self, ns: str) -> str:
        """The CrewAI scope of namespace ``ns``."""
        return "/" + "/".join(ns.split(":")[1:])

    def _namespaces(self, scope_prefix: str | None) -> list[Any]:
        """The summaries of the namespaces at or under ``scope_prefix``."""
        root = self.namespace(scope_prefix)
        return [
            summary
            for summary in self.memory.namespaces()
            if summary.ns == root or summary.ns.startswith(root + ":")
        ]

    def _call(self, method: str, /, **kwargs: Any) -> Any:
        return call_sync(self.memory, ACTOR, method, **kwargs)

    # --- records and facts --------------------------------------------------------------------
    def _record(self, fact: Fact) -> MemoryRecord:
        metadata = dict(fact.metadata or {})
        private = bool(metadata.pop(_PRIVATE, False))
        recorded = _naive(fact.recorded_at)
        return MemoryRecord(
            id=f"{fact.ns}/{fact.id}",
            content=fact.text,
            scope=self.scope(fact.ns),
            categories=list(fact.tags),
            metadata=metadata,
            importance=fact.importance if fact.importance is not None else 0.5,
            created_at=recorded,
            last_accessed=_naive(fact.last_accessed_at) if fact.last_accessed_at else recorded,
            source=fact.source,
            private=private,
        )

    @staticmethod
    def _fields(record: MemoryRecord) -> dict[str, Any]:
        metadata = dict(record.metadata)
        if record.private:
            metadata[_PRIVATE] = True
        return {
            "text": record.content,
            "tags": list(dict.fromkeys(record.categories)),
            "metadata": metadata or None,
            "importance": record.importance,
            "source": record.source or ACTOR,
        }

    def _head(self, record_id: str) -> Fact | None:
        """The believed fact that record ``record_id`` is now (its latest version)."""
        ns, _, fact_id = record_id.rpartition("/")
        if not ns:
            return None
        try:
            fact: Fact | Episode | None = self.memory.get(fact_id, ns=ns)
            if isinstance(fact, Fact) and fact.status == "superseded":
                head = self.memory.history(fact_id, ns=ns).head_id
                fact = self.memory.get(head, ns=ns) if head else None
        except NotFoundError:
            return None
        return fact if isinstance(fact, Fact) and fact.status == "active" else None

    def _believed(self, scope_prefix: str | None) -> list[Fact]:
        """The facts believed now at or under ``scope_prefix``, newest first (10,000 at most per
        namespace)."""
        facts: list[Fact] = []
        for summary in self._namespaces(scope_prefix):
            if summary.facts_believed:
                beliefs = self.memory.audit.beliefs(
                    ns=summary.ns, limit=min(summary.facts_believed, 10_000)
                )
                facts.extend(beliefs.facts)
        return sorted(facts, key=lambda f: f.recorded_at, reverse=True)

    # --- the StorageBackend protocol ----------------------------------------------------------
    def save(self, records: list[MemoryRecord]) -> None:
        """Remember the records as facts, one transaction per scope; each record's id becomes
        its fact's."""
        by_ns: dict[str, list[MemoryRecord]] = {}
        for record in records:
            by_ns.setdefault(self.namespace(record.scope), []).append(record)
        for ns, group in by_ns.items():
            facts = self._call("remember_many", facts=[self._fields(r) for r in group], ns=ns)
            for record, fact in zip(group, facts, strict=True):
                record.id = f"{ns}/{fact.id}"

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """Recall on the text of ``query_embedding`` in the scopes under ``scope_prefix``."""
        query = self.embedder.text_of(query_embedding)
        found: list[tuple[MemoryRecord, float]] = []
        for summary in self._namespaces(scope_prefix):
            result = self._call(
                "recall",
                query=query,
                ns=summary.ns,
                k=max(1, min(limit, 100)),
                kinds=["fact"],
                tags=categories or None,
            )
            for hit in result.hits:
                score = hit.scores.vector if hit.scores.vector is not None else hit.score
                record = self._record(hit.fact)
                if score >= min_score and _matches(record, metadata_filter):
                    found.append((record, max(0.0, min(1.0, score))))
        found.sort(key=lambda pair: pair[1], reverse=True)
        return found[:limit]

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Retract the records that match; returns how many."""
        if record_ids is not None:
            facts = [f for f in map(self._head, record_ids) if f is not None]
        else:
            facts = self._believed(scope_prefix)
        chosen = [
            fact
            for fact in facts
            if (not categories or set(categories) & set(fact.tags))
            and (older_than is None or _naive(fact.recorded_at) < _naive(older_than))
            and _matches(self._record(fact), metadata_filter)
        ]
        for fact in chosen:
            self._call("retract", id=fact.id, ns=fact.ns, reason=f"deleted {_REASON}")
        return len(chosen)

    def update(self, record: MemoryRecord) -> None:
        """Store the record's content as the new version of its fact (``supersedes``)."""
        ns = self.namespace(record.scope)
        head = self._head(record.id)
        if head is not None and head.ns != ns:
            self._call(
                "retract", id=head.id, ns=head.ns, reason=f"moved to {record.scope} {_REASON}"
            )
        supersedes = [head.id] if head is not None and head.ns == ns else []
        fact = self._call(
            "remember",
            ns=ns,
            supersedes=supersedes,
            reason=f"updated {_REASON}" if supersedes else None,
            **self._fields(record),
        )
        record.id = f"{ns}/{fact.id}"

    def get_record(self, record_id: str) -> MemoryRecord | None:
        """The record's latest version, or None when there is none believed."""
        head = self._head(record_id)
        return None if head is None else self._record(head)

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """The records believed at or under ``scope_prefix``, newest first."""
        return [self._record(f) for f in self._believed(scope_prefix)[offset : offset + limit]]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        facts = self._believed(scope)
        return ScopeInfo(
            path=scope,
            record_count=len(facts),
            categories=sorted({tag for fact in facts for tag in fact.tags}),
            oldest_record=_naive(facts[-1].recorded_at) if facts else None,
            newest_record=_naive(facts[0].recorded_at) if facts else None,
            child_scopes=self.list_scopes(scope),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The scopes right under ``parent`` that hold something."""
        depth = len(self.namespace(parent).split(":"))
        children = {
            ":".join(summary.ns.split(":")[: depth + 1])
            for summary in self._namespaces(parent)
            if len(summary.ns.split(":")) > depth
        }
        return sorted(self.scope(ns) for ns in children)

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        return dict(Counter(tag for fact in self._believed(scope_prefix) for tag in fact.tags))

    def count(self, scope_prefix: str | None = None) -> int:
        return sum(summary.facts_believed for summary in self._namespaces(scope_prefix))

    def reset(self, scope_prefix: str | None = None) -> None:
        """Retract everything believed at or under ``scope_prefix``."""
        self.delete(scope_prefix=scope_prefix)

    async def asave(self, records: list[MemoryRecord]) -> None:
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        return await asyncio.to_thread(
            self.search,
            query_embedding,
            scope_prefix,
            categories,
            metadata_filter,
            limit,
            min_score,
        )

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        return await asyncio.to_thread(
            self.delete, scope_prefix, categories, record_ids, older_than, metadata_filter
        )


def _naive(moment: datetime) -> datetime:
    """``moment`` in UTC without a zone, as CrewAI keeps its times."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _matches(record: MemoryRecord, wanted: dict[str, Any] | None) -> bool:
    return not wanted or all(record.metadata.get(k) == v for k, v in wanted.items())


__all__ = ["ACTOR", "GraphmemStorage", "TextKeyedEmbedder"]
