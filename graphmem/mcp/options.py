"""What an operator decides when starting ``graphmem mcp``: the namespaces a call may name,
which tools are exposed, whether writes are allowed, and how large a result may be."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from graphmem.errors import ClientUsageError, InvalidInputError, PermissionDeniedError
from graphmem.models import check_namespace
from graphmem.models.keys import ApiKey, Role
from graphmem.ops.table import by_tool

logger = logging.getLogger("graphmem.mcp")

#: Every tool, in the order the server lists them: those that only read, then those that
#: write. Which is which, and the role an API key needs for each, is the table of operations'
#: (:mod:`graphmem.ops.table`): a tool's role is its operation's.
ALL_TOOLS: tuple[str, ...] = (
    "search_memories",
    "get_context",
    "get_history",
    "get_memory",
    "list_beliefs",
    "what_changed",
    "list_contradictions",
    "list_review_flags",
    "memory_stats",
    "add_memory",
    "add_messages",
    "retract_memory",
    "forget",
    "mark_contradiction",
    "resolve_contradiction",
    "consolidate",
    "confirm_review",
)


def tool_role(name: str) -> Role:
    """The role an API key needs to call the tool ``name``: its operation's."""
    return by_tool(name).role or "read"


#: The tools that only read (recall, audits, listings): all that ``--read-only`` exposes.
READ_TOOLS: tuple[str, ...] = tuple(t for t in ALL_TOOLS if not by_tool(t).writes)
#: The tools that write.
WRITE_TOOLS: tuple[str, ...] = tuple(t for t in ALL_TOOLS if by_tool(t).writes)
#: The default profile: remember, search, context, history and forget.
CORE_TOOLS: tuple[str, ...] = (
    "add_memory",
    "search_memories",
    "get_context",
    "get_history",
    "forget",
)
#: Former tool names ``--tools`` still takes, each for the tool it became.
DEPRECATED_TOOLS: dict[str, str] = {"delete_memory": "retract_memory"}
#: A result's default size cap, in characters of JSON (about 4,000 tokens).
DEFAULT_MAX_CHARS = 16_000


def tool_selection(spec: str, *, read_only: bool) -> tuple[str, ...]:
    """The tools named by ``--tools``: ``core``, ``all`` or a comma-separated list of names
    (profiles may be mixed in); with ``read_only``, the writing tools are left out. A former
    name (:data:`DEPRECATED_TOOLS`) selects the tool it became, with a warning in the log."""
    chosen: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part in DEPRECATED_TOOLS:
            logger.warning(
                "the tool %s is now called %s: --tools %s is deprecated",
                part,
                DEPRECATED_TOOLS[part],
                part,
            )
            part = DEPRECATED_TOOLS[part]
        names = {"core": CORE_TOOLS, "all": ALL_TOOLS}.get(part, (part,))
        for name in names:
            if name not in ALL_TOOLS:
                raise ClientUsageError(
                    f"unknown tool {name!r}: the tools are {', '.join(ALL_TOOLS)} "
                    "(or the profiles core and all)"
                )
            if name not in chosen:
                chosen.append(name)
    if not chosen:
        raise ClientUsageError("--tools names no tool")
    if read_only:
        chosen = [name for name in chosen if name in READ_TOOLS]
        if not chosen:
            raise ClientUsageError(f"--read-only leaves none of the tools {spec!r}: they all write")
    return tuple(name for name in ALL_TOOLS if name in chosen)


@dataclass(frozen=True)
class McpOptions:
    """The server's policy. ``namespace`` is the one a call that names none uses; a call may
    name it or one of ``allowed`` and nothing else."""

    namespace: str
    allowed: tuple[str, ...] = ()
    tools: tuple[str, ...] = CORE_TOOLS
    read_only: bool = False
    full_ids: bool = False
    max_chars: int = DEFAULT_MAX_CHARS
    #: Behind API keys (``graphmem serve``, ``graphmem mcp --transport http``): each call's
    #: key decides which namespaces it may name and whether it may write.
    keyed: bool = False
    #: With keys, whether a call is also held to ``namespace`` and ``allowed`` (``graphmem
    #: mcp``) or only to its key (``graphmem serve``).
    bounded: bool = True

    def __post_init__(self) -> None:
        for ns in (self.namespace, *self.allowed):
            try:
                check_namespace(ns)
            except ValueError as exc:
                raise ClientUsageError(str(exc)) from None
        if not 1_000 <= self.max_chars <= 1_000_000:
            raise ClientUsageError("the result size cap must be 1,000 to 1,000,000 characters")
        if not self.tools:
            raise ClientUsageError("a server needs at least one tool")
        unknown = [t for t in self.tools if t not in ALL_TOOLS]
        if unknown:
            raise ClientUsageError(f"unknown tools: {', '.join(unknown)}")
        if self.read_only and any(t in WRITE_TOOLS for t in self.tools):
            raise ClientUsageError("a read-only server exposes no writing tool")

    @property
    def namespaces(self) -> frozenset[str]:
        """Every namespace a call may name."""
        return frozenset((self.namespace, *self.allowed))

    def namespace_for(self, requested: str | None, key: ApiKey | None = None) -> str:
        """The namespace a call works in: the default one, or the one it names if allowed.
        With a key, the key must open it too; unless ``bounded``, the namespaces the key opens
        are the allowed ones, and the default is the key's one namespace when it has one."""
        if key is not None and not self.bounded:
            return _keyed_namespace(self.namespace, requested, key)
        if key is not None:
            return _keyed_namespace(self.namespace, self.namespace_for(requested), key)
        if requested is None or requested == "":
            return self.namespace
        if requested not in self.namespaces:
            allowed = ", ".join(sorted(self.namespaces))
            raise InvalidInputError(
                f"namespace {requested!r} is not open to this server (allowed: {allowed})"
            )
        return requested


def _keyed_namespace(default: str, requested: str | None, key: ApiKey) -> str:
    if requested:
        chosen = requested
    elif len(key.namespaces) == 1 and key.prefix is None:
        chosen = key.namespaces[0]
    else:
        chosen = default
    if not key.opens(chosen):
        raise PermissionDeniedError(
            f"the API key {key.name!r} does not open namespace {chosen!r} (it opens: "
            f"{key.scope()}); name one of them in `namespace`"
        )
    return chosen
