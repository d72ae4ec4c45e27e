"""What every MCP tool shares: the argument types a model sees, the namespace and id checks,
the shaping of answers (:mod:`graphmem.mcp.shape`), and graphmem's errors as tool errors."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from contextvars import ContextVar
from functools import wraps
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field

from graphmem.client.aio import AsyncMemory
from graphmem.core.audit.times import moment
from graphmem.errors import (
    ClientUsageError,
    ConsolidationBusyError,
    EmbeddingError,
    GraphmemError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    TransactionTimeoutError,
    TransientDatabaseError,
    UndoRefusedError,
)
from graphmem.mcp.options import McpOptions
from graphmem.mcp.shape import SHORT_ID, dumps, fitted, ids_in, plain, replace_ids, short_ids
from graphmem.models.bookmarks import encode
from graphmem.models.keys import ApiKey
from graphmem.store import bookmarks

logger = logging.getLogger("graphmem.mcp")
#: Id prefixes checked per read (the core takes at most 1,000 ids a call).
_PREFIX_BATCH = 500
#: Errors whose text is the caller's to read; other errors are the server's, and their detail
#: (database codes, addresses, settings) goes to the server's log, not to the model.
_CALLER_ERRORS = (
    InvalidInputError,
    PermissionDeniedError,
    ClientUsageError,
    ConsolidationBusyError,
    UndoRefusedError,
    TransientDatabaseError,
    TransactionTimeoutError,
)

Namespace = Annotated[
    str | None,
    Field(description="Namespace to use; default: the server's. Only allowed ones are open."),
]
TIMES = (
    "ISO 8601 with a zone ('2026-03-01T12:00:00Z'), a date ('2026-03-01', midnight UTC), "
    "'now', 'today', 'yesterday' or 'N minutes|hours|days|weeks ago'."
)
Ids = Annotated[
    list[str] | None,
    Field(description="Memory ids, as shown in results (a shown prefix is enough)."),
]
Reason = Annotated[str | None, Field(description="Why, in a sentence; kept in the history.")]


class MessageArg(BaseModel):
    """One message of a conversation, stored verbatim."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="The message text, verbatim.")
    role: str = Field(default="user", description="user, assistant, system or tool.")
    speaker: str | None = Field(default=None, description="Who said it, if not the role.")
    occurred_at: str | None = Field(
        default=None, description="When it was said: ISO 8601 with a zone."
    )
    id: str | None = Field(default=None, description="Your own id of the message.")


Result = Coroutine[Any, Any, str]
#: The API key of the call being served, under ``graphmem serve`` (set per call by the
#: server from the HTTP request; None over stdio and ``graphmem mcp``).
CALL_KEY: ContextVar[ApiKey | None] = ContextVar("graphmem_mcp_key", default=None)


def tool(fn: Callable[..., Result]) -> Callable[..., Result]:
    """graphmem's errors become tool errors carrying graphmem's message (no traceback)."""

    @wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> str:
        try:
            return await fn(*args, **kwargs)
        except _CALLER_ERRORS as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        except EmbeddingError as exc:
            logger.error("%s failed: EmbeddingError: %s", fn.__name__, exc)
            raise ToolError(
                "EmbeddingError: the memory server's embedding model could not be loaded or "
                "run, so nothing was searched or written (the detail is in the server's log)"
            ) from None
        except GraphmemError as exc:
            logger.error("%s failed: %s: %s", fn.__name__, type(exc).__name__, exc)
            raise ToolError(
                f"{type(exc).__name__}: the memory server could not complete this call "
                "(the detail is in the server's log)"
            ) from None

    return call


class ToolBase:
    """The shared state and checks of one server's tools: its client and its options."""

    def __init__(self, memory: AsyncMemory, options: McpOptions) -> None:
        self.memory = memory
        self.options = options

    # --- shared -------------------------------------------------------------------------------
    def _ns(self, namespace: str | None) -> str:
        return self.options.namespace_for(namespace, CALL_KEY.get())

    def _counts_access(self) -> bool:
        """Whether a search stamps its hits as accessed: not on a read-only server, and not
        for a call whose API key may only read (it writes nothing)."""
        key = CALL_KEY.get()
        return not self.options.read_only and (key is None or key.allows("write"))

    async def _ids(self, ids: list[str], ns: str) -> list[str]:
        """Full ids for ids and shown prefixes; an unknown or ambiguous prefix is an error."""
        short = [i for i in ids if len(i) < 36]
        if not short:
            return ids
        matches = await self.memory.match_ids(short, ns=ns)
        for prefix in short:
            found = matches[prefix]
            if not found:
                raise NotFoundError(f"no id in namespace {ns!r} starts with {prefix!r}")
            if len(found) > 1:
                raise InvalidInputError(
                    f"the id prefix {prefix!r} names several memories ({', '.join(found)}); "
                    "give the whole id"
                )
        return [matches[i][0] if i in matches else i for i in ids]

    async def _one(self, item: str, ns: str) -> str:
        return (await self._ids([item], ns))[0]

    async def _out(
        self, data: Mapping[str, Any], ns: str, items: str | None = None, *, tail: bool = False
    ) -> str:
        """The answer as compact JSON within the size cap, ids shortened where safe."""
        # Top-level lists stay even when empty: "results": [] says nothing was found.
        shaped = {k: plain(v) for k, v in data.items() if v is not None and v != {}}
        shaped = fitted(shaped, self.options.max_chars, items, tail=tail)
        marks = causal_bookmarks()  # a write's, under graphmem serve: before the reads below
        if not self.options.full_ids:
            found = ids_in(shaped)
            if found:
                shaped = replace_ids(shaped, short_ids(found, await self._unique(found, ns)))
        if marks is not None:
            shaped["bookmark"] = marks
        return dumps(shaped)

    async def _unique(self, ids: set[str], ns: str) -> dict[str, str]:
        """The short prefixes of ``ids`` that name one id in the namespace. Only a read: when
        it fails, ids stay whole, so that an answer after a committed write still comes."""
        prefixes = sorted({i[:SHORT_ID] for i in ids})
        unique: dict[str, str] = {}
        try:
            for start in range(0, len(prefixes), _PREFIX_BATCH):
                batch = prefixes[start : start + _PREFIX_BATCH]
                matches = await self.memory.match_ids(batch, ns=ns)
                unique.update({p: found[0] for p, found in matches.items() if len(found) == 1})
        except GraphmemError as exc:
            logger.warning("ids left whole: %s", exc)
            return {}
        return unique

    @staticmethod
    def _time(name: str, value: str | None) -> Any:
        return None if value is None else moment(name, value)


def causal_bookmarks() -> str | None:
    """The ``Graphmem-Bookmark`` of a write tool's call under ``graphmem serve``: the bookmarks
    of its last transaction, which a later request sends back to read what it wrote."""
    causal = bookmarks.current()
    marks = causal.answered() if causal is not None else None
    return encode(marks) if marks else None


def hit_data(hit: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"id": hit.id, "kind": "message" if hit.kind == "episode" else "fact"}
    item["score"] = round(hit.score, 3)
    body = plain(hit.fact if hit.fact is not None else hit.episode)
    body.pop("id", None)
    if hit.kind == "episode":
        body["text"] = body.pop("content", hit.text)
    item.update(body)
    if hit.via != "search":
        item["via"] = hit.via
        # Which fact the search matched (a superseded one) or referenced this one.
        through = hit.superseded_match or hit.referenced_from
        if through:
            item["found_through"] = through
    sources = plain(hit.provenance)
    if sources:
        item["from_messages"] = sources.get("episode_ids", [])
    return item
