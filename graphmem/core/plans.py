"""The steps a memory operation's plan yields, and what each is answered with.

Each operation of :class:`~graphmem.core.memory_core.MemoryCore` is a generator (a *plan*)
that yields what it needs done and receives the answer: :class:`Embed` (texts to vectors),
:class:`Extract` (facts from new episodes), :class:`Propose` (a consolidation plan for a
cluster) and :class:`Transaction` (a unit of work that yields
:class:`Run` statements and receives their rows). :class:`~graphmem.client.Memory` and
:class:`~graphmem.client.AsyncMemory` carry them out.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from graphmem.errors import ClientUsageError
from graphmem.models import Episode
from graphmem.models.consolidation import Cluster
from graphmem.store.cypher import CypherQuery

T = TypeVar("T")
Rows = list[dict[str, Any]]


class VectorParam(list[float]):
    """A vector as a Cypher parameter: a plain list to the driver, with a short ``repr``.

    The Neo4j Python driver formats the ``repr`` of every parameter for its debug log even
    when debug logging is off; for thousands of 384-d vectors that costs more than sending
    them. This keeps the log line short and the write path fast.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)}-d vector>"


@dataclass(frozen=True)
class Run:
    """One statement inside a transaction; answered with its rows as dicts."""

    query: CypherQuery
    params: dict[str, Any]
    #: Rows of maps, lists and plain values only (no nodes, relationships or paths), taken as
    #: the driver reads them, without its second pass over every nested value: for pages of
    #: thousands of embeddings (a namespace export), where that pass costs most of the time.
    plain_rows: bool = False


Work = Generator[Run, Rows, T]


@dataclass(frozen=True)
class Transaction(Generic[T]):
    """A read or write transaction running ``work()``; answered with its return value."""

    mode: Literal["read", "write"]
    work: Callable[[], Work[T]]


@dataclass(frozen=True)
class Embed:
    """Texts to embed; answered with a float32 array, one unit row per text."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class LoadModel:
    """Load the embedding model now if it loads lazily (answered with None), so that an
    embedding timed next measures the embedding, not the loading."""


@dataclass(frozen=True)
class Progress:
    """``count`` more input items handled: the runner calls ``report(count)`` (answered with
    None); :class:`~graphmem.client.AsyncMemory` also awaits what it returns if awaitable."""

    report: Callable[[int], object]
    count: int


@dataclass(frozen=True)
class Extract:
    """Episodes for the extractor named ``extractor`` (the client's own, or the LLM's);
    answered with a list of ExtractedFact."""

    episodes: tuple[Episode, ...]
    extractor: str


@dataclass(frozen=True)
class Propose:
    """A consolidation cluster for the configured proposer; answered with its Proposal (with
    ``summarize``: its ``summarize`` method's, a ``SUMMARIZE`` operation or none)."""

    cluster: Cluster
    summarize: bool = False


Step = Run | LoadModel | Embed | Progress | Extract | Propose | Transaction[Any]
Plan = Generator[LoadModel | Embed | Progress | Extract | Propose | Transaction[Any], Any, T]


def reported(result: object) -> None:
    """Refuses what a progress callback returned when it is awaitable: only
    :class:`~graphmem.client.AsyncMemory` awaits one. The sync client's first report comes
    before anything is written, so the refusal writes nothing."""
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited: close it rather than leave a warning behind
        raise ClientUsageError(
            "progress returned an awaitable; an async progress callback needs AsyncMemory"
        )


def single(run: Run) -> Work[Rows]:
    return (yield run)
