"""What the adapters share: the client calls an adapter makes, written once as a generator of
:class:`Call` steps and carried out by a sync or an async client with the adapter as the actor,
and the error for a framework that is not installed."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from graphmem.core.actor import acting_as
from graphmem.errors import ClientUsageError, GraphmemError

if TYPE_CHECKING:
    from typing import TypeAlias

    from graphmem.client import AsyncMemory, Memory
    from graphmem.remote import AsyncRemoteMemory, RemoteMemory

    #: The clients an adapter takes.
    AnyClient: TypeAlias = Memory | AsyncMemory | RemoteMemory | AsyncRemoteMemory

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One call of a client method (``"recall"``, ``"audit.beliefs"``) with keyword arguments;
    answered with what it returns, or raises into the steps what it raised."""

    method: str
    kwargs: dict[str, Any] = field(default_factory=dict)


#: Calls an adapter's operation makes, answered one by one, returning the operation's result.
Steps = Generator[Call, Any, T]


def missing_extra(extra: str, framework: str) -> str:
    """The message of the ImportError an adapter raises when its framework is not installed."""
    return f"graphmem's {framework} adapter needs {framework}: pip install 'graphmem[{extra}]'"


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
    (through ``graphmem serve``, the API key's name is the actor instead)."""
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
    with a sync one."""
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


__all__ = ["Call", "Steps", "is_async", "missing_extra", "run_async", "run_sync"]
