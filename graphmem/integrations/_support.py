"""What the adapters share: the client calls an adapter makes, written once as a generator of
:class:`Call` steps and carried out by a sync or an async client with the adapter as the actor
(:func:`run_sync`, :func:`run_async`; :func:`call_sync` and :func:`call_async` for a single
call), the check that an adapter was given a graphmem client, and the error for a framework
that is not installed."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from graphmem.client.api_aio import AsyncMemoryAPI
from graphmem.client.api_sync import MemoryAPI
from graphmem.core.actor import acting_as
from graphmem.errors import ClientUsageError, GraphmemError

#: Any of graphmem's clients: the library (``Memory``, ``AsyncMemory``) or the HTTP client of
#: ``graphmem serve`` (``RemoteMemory``, ``AsyncRemoteMemory``).
AnyClient: TypeAlias = MemoryAPI | AsyncMemoryAPI

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One call of a client method (``"recall"``, ``"audit.beliefs"``) with keyword arguments;
    answered with what it returns, or raises into the steps what it raised."""

    method: str
    kwargs: dict[str, Any] = field(default_factory=dict)


#: Calls an adapter's operation makes, answered one by one, returning the operation's result.
Steps = Generator[Call, Any, T]


def missing_extra(extra: str, framework: str, cause: ImportError) -> ImportError:
    """The error an adapter raises when its framework is not installed: it names the extra."""
    return ImportError(
        f"graphmem's {framework} adapter needs {framework} ({cause.name or cause}): "
        f"pip install '<graphmem checkout or wheel>[{extra}]'"
    )


def check_client(memory: object) -> AnyClient:
    """``memory`` itself, refused with a clear error unless it is a graphmem client."""
    if not isinstance(memory, MemoryAPI | AsyncMemoryAPI):
        raise ClientUsageError(
            "the adapter takes a graphmem client (Memory, AsyncMemory, RemoteMemory or "
            f"AsyncRemoteMemory), not {type(memory).__name__}"
        )
    return memory


def is_async(memory: Any) -> bool:
    """Whether ``memory`` is an async client (``AsyncMemory``, ``AsyncRemoteMemory``)."""
    return inspect.iscoroutinefunction(getattr(memory, "remember", None))


def _method(memory: Any, path: str) -> Any:
    target = memory
    for part in path.split("."):
        target = getattr(target, part)
    return target


def _next(steps: Steps[T], answer: Any, failure: GraphmemError | None) -> tuple[Call | None, Any]:
    """The next call of ``steps`` after ``answer`` (or ``failure``), or None and the result."""
    try:
        return (steps.throw(failure) if failure else steps.send(answer)), None
    except StopIteration as done:
        return None, done.value


def run_sync(memory: Any, steps: Steps[T], actor: str) -> T:
    """Carry out ``steps`` with the sync client ``memory``, the writes attributed to ``actor``
    (through ``graphmem serve``, the API key's name is the actor instead). An async client
    belongs to its event loop, which sync code cannot drive: ClientUsageError."""
    if is_async(memory):
        raise ClientUsageError(
            f"{type(memory).__name__} is an async client: use the adapter's async methods "
            "(ainvoke, aget, ...), or give it a Memory or RemoteMemory for the sync ones"
        )
    with acting_as(actor):
        call, result = _next(steps, None, None)
        while call is not None:
            try:
                answer, failure = _method(memory, call.method)(**call.kwargs), None
            except GraphmemError as exc:
                answer, failure = None, exc
            call, result = _next(steps, answer, failure)
    return result  # type: ignore[no-any-return]


async def run_async(memory: Any, steps: Steps[T], actor: str) -> T:
    """Carry out ``steps`` with ``memory``: awaited with an async client, in a worker thread
    with a sync one (so the event loop goes on)."""
    if not is_async(memory):
        return await asyncio.to_thread(run_sync, memory, steps, actor)
    with acting_as(actor):
        call, result = _next(steps, None, None)
        while call is not None:
            try:
                answer, failure = await _method(memory, call.method)(**call.kwargs), None
            except GraphmemError as exc:
                answer, failure = None, exc
            call, result = _next(steps, answer, failure)
    return result  # type: ignore[no-any-return]


def _one(method: str, kwargs: dict[str, Any]) -> Steps[Any]:
    return (yield Call(method, kwargs))


def call_sync(memory: Any, actor: str, method: str, /, **kwargs: Any) -> Any:
    """``memory.<method>(**kwargs)`` from sync code, as :func:`run_sync` carries it out."""
    return run_sync(memory, _one(method, kwargs), actor)


async def call_async(memory: Any, actor: str, method: str, /, **kwargs: Any) -> Any:
    """``memory.<method>(**kwargs)`` awaited, as :func:`run_async` carries it out."""
    return await run_async(memory, _one(method, kwargs), actor)


__all__ = [
    "AnyClient",
    "Call",
    "Steps",
    "call_async",
    "call_sync",
    "check_client",
    "is_async",
    "missing_extra",
    "run_async",
    "run_sync",
]
