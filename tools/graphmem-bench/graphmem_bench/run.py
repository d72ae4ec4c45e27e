"""The run protocol every benchmark and evaluation follows: :func:`measuring_run` gives the
Neo4j the run's options name (a throwaway local server, deleted afterwards, or the configured
one), the embedder (loaded once, on first use), and the clients it opens, all closed in the
reverse order when the run ends, the server last."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import graphmem
from graphmem import GraphmemSettings
from graphmem.testing import (
    Embedder,
    Neo4jTarget,
    Progress,
    ServerOptions,
    load_embedder,
    run_server,
    scratch_server_pid,
    settle,
)

if TYPE_CHECKING:
    from graphmem import AsyncMemory, Memory


class RunOn(TypedDict, total=False):
    """Where and with what a run measures (see :func:`measuring_run`): every benchmark's
    ``run_...`` function takes these."""

    settings: GraphmemSettings | None
    target: Neo4jTarget | None
    embedder: Embedder | None
    progress: Progress | None


class Run:
    """One measuring run on one Neo4j: its settings and target, its progress, its embedder,
    and the clients it opened (see :func:`measuring_run`)."""

    def __init__(
        self,
        options: ServerOptions,
        settings: GraphmemSettings,
        target: Neo4jTarget,
        say: Progress,
        embedder: Embedder | None,
        stack: ExitStack,
    ) -> None:
        self.options = options
        self.settings = settings
        self.target = target
        self.say = say
        self.started = datetime.now(UTC)
        self._given = embedder
        self._stack = stack

    @cached_property
    def embedder(self) -> Embedder:
        """The embedder the run was given, or the one its settings name, loaded now."""
        return load_embedder(self.settings, self._given, self.say)

    @cached_property
    def server_pid(self) -> int | None:
        """The throwaway server's process (None on a configured server): see
        :func:`graphmem.testing.scratch_server_pid`."""
        return scratch_server_pid(self.options, self.settings)

    def settle(self, when: str) -> float | None:
        """Wait until the throwaway server is idle before ``when`` (see
        :func:`graphmem.testing.settle`); the CPU seconds it used meanwhile."""
        return settle(self.server_pid, when, self.say)

    def memory(self, **options: Any) -> Memory:
        """A :class:`~graphmem.Memory` on the run's Neo4j, closed when the run ends: the run's
        settings and embedder unless ``options`` give others (``settings=``, ``embedder=``,
        ``ns=``, ``proposer=``, ...)."""
        settings, rest = self._client_options(options)
        # Looked up on each call (not bound at import), as graphmem's names are.
        memory: Memory = graphmem.Memory(settings, **rest)
        return self._stack.enter_context(memory)

    def async_memory(self, **options: Any) -> AsyncMemory:
        """An :class:`~graphmem.AsyncMemory` on the run's Neo4j, as :meth:`memory`; the caller
        opens and closes it (``async with``)."""
        settings, rest = self._client_options(options)
        memory: AsyncMemory = graphmem.AsyncMemory(settings, **rest)
        return memory

    def _client_options(self, options: dict[str, Any]) -> tuple[GraphmemSettings, dict[str, Any]]:
        settings = options.pop("settings", None) or self.settings
        embedder = options.pop("embedder", None) or self.embedder
        return settings, {"target": self.target, "embedder": embedder, **options}


@contextmanager
def measuring_run(options: ServerOptions, **on: Unpack[RunOn]) -> Iterator[Run]:
    """A :class:`Run` on the Neo4j ``options`` name: a throwaway local server that is deleted
    afterwards, or ``target`` (default: the Neo4j the settings name). ``settings`` default to
    :func:`graphmem.load_settings`, ``embedder`` to the one they name, ``progress`` (one line
    per step) to none."""
    say: Progress = on.get("progress") or (lambda _line: None)
    with ExitStack() as stack:
        run_settings, run_target = stack.enter_context(
            run_server(options, on.get("settings"), on.get("target"), say)
        )
        yield Run(options, run_settings, run_target, say, on.get("embedder"), stack)


__all__ = ["Run", "RunOn", "measuring_run"]
