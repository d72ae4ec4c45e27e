"""Bookmarks of one request: the bookmarks a request of ``graphmem serve`` must wait for (its
``Graphmem-Bookmark`` header), and the bookmarks of its last transaction (for its answer).

A client chains all its transactions through one bookmark manager (so that on a cluster each
sees the writes before it). Inside :func:`following`, the sessions the client opens use
:func:`manager` instead: the client's manager, plus the request's bookmarks on the way in,
and every bookmark Neo4j hands back noted in the request's :class:`Causal`, on the way out.
Outside, :func:`manager` is the client's own, unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import overload

from neo4j.api import AsyncBookmarkManager, BookmarkManager


@dataclass
class Causal:
    """One request's bookmarks: those it waits for, and those of its last transaction;
    ``report``: whether its answer carries them (a write's does)."""

    given: tuple[str, ...] = ()
    latest: tuple[str, ...] | None = None
    report: bool = False

    def answered(self) -> tuple[str, ...] | None:
        """The bookmarks its answer carries, if any."""
        return self.latest if self.report and self.latest else None


_CAUSAL: ContextVar[Causal | None] = ContextVar("graphmem_causal", default=None)


@contextmanager
def following(causal: Causal) -> Iterator[Causal]:
    """The client's transactions in this block wait for ``causal.given`` and note their
    bookmarks in ``causal.latest``."""
    token = _CAUSAL.set(causal)
    try:
        yield causal
    finally:
        _CAUSAL.reset(token)


def current() -> Causal | None:
    """The request's bookmarks, inside :func:`following`."""
    return _CAUSAL.get()


@overload
def manager(base: AsyncBookmarkManager) -> AsyncBookmarkManager: ...
@overload
def manager(base: BookmarkManager) -> BookmarkManager: ...
def manager(base: AsyncBookmarkManager | BookmarkManager) -> AsyncBookmarkManager | BookmarkManager:
    """The bookmark manager a session of the client opens with: ``base`` (the client's), or
    inside :func:`following` one that also waits for, and notes, the request's bookmarks."""
    causal = _CAUSAL.get()
    if causal is None:
        return base
    if inspect.iscoroutinefunction(base.get_bookmarks):  # the async driver's
        return _AsyncRequestManager(base, causal)  # type: ignore[arg-type]
    return _RequestManager(base, causal)  # type: ignore[arg-type]


class _RequestManager(BookmarkManager):
    def __init__(self, base: BookmarkManager, causal: Causal) -> None:
        self.base, self.causal = base, causal

    def get_bookmarks(self) -> Collection[str]:
        return {*self.base.get_bookmarks(), *self.causal.given}

    def update_bookmarks(self, previous: Collection[str], new: Collection[str]) -> None:
        self.base.update_bookmarks(previous, new)
        self.causal.latest = tuple(new)


class _AsyncRequestManager(AsyncBookmarkManager):
    def __init__(self, base: AsyncBookmarkManager, causal: Causal) -> None:
        self.base, self.causal = base, causal

    async def get_bookmarks(self) -> Collection[str]:
        return {*(await self.base.get_bookmarks()), *self.causal.given}

    async def update_bookmarks(self, previous: Collection[str], new: Collection[str]) -> None:
        await self.base.update_bookmarks(previous, new)
        self.causal.latest = tuple(new)


__all__ = ["Causal", "current", "following", "manager"]
