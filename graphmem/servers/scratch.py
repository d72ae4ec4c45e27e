"""A throwaway Neo4j for a measuring run (``graphmem bench``, ``graphmem eval``).

:func:`run_server` (and :func:`on_server`, which runs a function there) gives the Neo4j a
run's :class:`ServerOptions` name: a local server in a new temporary home on a free port
(:func:`scratch_neo4j`), stopped and deleted afterwards, or the configured one. Between timed
phases a run waits until the throwaway server is idle (:func:`settle`), so that no phase is
charged for work it did not cause.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, field_validator

from graphmem._signals import EndingSignals
from graphmem.servers.connection import Neo4jTarget
from graphmem.servers.processes import free_port, process_cpu_seconds
from graphmem.settings import GraphmemSettings, load_settings

R = TypeVar("R")
#: Receives one line per step of a run.
Progress = Callable[[str], None]
ServerMode = Literal["scratch", "configured"]


class ServerOptions(BaseModel):
    """Which Neo4j a measuring run uses: a throwaway local server (``scratch``, with this heap
    and page cache) or the configured one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    server: ServerMode = "scratch"
    heap: str = "2g"
    pagecache: str = "1g"

    @field_validator("heap", "pagecache")
    @classmethod
    def _check_memory(cls, value: str) -> str:
        if not re.fullmatch(r"[1-9][0-9]*[kKmMgG]?", value):
            raise ValueError(f"must be a size such as 512m or 2g, got {value!r}")
        return value.lower()


# --- waiting for an idle server -------------------------------------------------------------------
#: A throwaway server counts as idle once it used less than this share of one core over one
#: window; the bench waits for that (at most the timeout) before it times anything that a
#: busy server would distort.
IDLE_SHARE = 0.05
IDLE_WINDOW_S = 2.0
IDLE_TIMEOUT_S = 180.0


def wait_until_idle(
    cpu_seconds: Callable[[], float | None],
    *,
    window: float = IDLE_WINDOW_S,
    share: float = IDLE_SHARE,
    timeout: float = IDLE_TIMEOUT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> float | None:
    """Wait until ``cpu_seconds()`` grows by less than ``share * window`` over one ``window``.

    Returns the seconds waited, or None when the CPU time is unknown or the process was still
    busy after ``timeout`` seconds.
    """
    began = clock()
    before = cpu_seconds()
    while before is not None and clock() - began < timeout:
        sleep(window)
        after = cpu_seconds()
        if after is not None and after - before < share * window:
            return clock() - began
        before = after
    return None


def cpu_reader(pid: int | None) -> Callable[[], float | None]:
    """A reader of the CPU seconds process ``pid`` has used so far (None: no such process, or
    not readable here; always None without a pid)."""
    if pid is None:
        return lambda: None
    return lambda: process_cpu_seconds(pid)


def scratch_server_pid(options: ServerOptions, settings: GraphmemSettings) -> int | None:
    """The process to wait for between phases: the throwaway server of a ``scratch`` run.

    A throwaway server is left to finish its start-up work (JIT compilation, index set-up)
    and the work each step leaves behind (Lucene merges) before the next timed phase, so that
    no phase is charged for work it did not cause. A configured server may be serving others,
    so it is not waited for (None).
    """
    if options.server != "scratch":
        return None
    from graphmem.servers.local import LocalNeo4jServer

    return LocalNeo4jServer(settings).status().pid


def settle(pid: int | None, when: str, say: Progress) -> float | None:
    """Wait until the throwaway server ``pid`` (None: no such server) is idle, and say so.

    Returns the CPU seconds the server used while it was waited for (None: not known)."""
    if pid is None:
        return None
    cpu_seconds = cpu_reader(pid)
    before = cpu_seconds()
    waited = wait_until_idle(cpu_seconds)
    if waited is None:
        say(f"the throwaway Neo4j was still busy after {IDLE_TIMEOUT_S:.0f} s; {when} anyway")
    else:
        say(f"the throwaway Neo4j was idle after {waited:.0f} s; {when}")
    after = cpu_seconds()
    return after - before if before is not None and after is not None else None


# --- the server's lifetime ------------------------------------------------------------------------
@contextmanager
def scratch_neo4j(
    settings: GraphmemSettings, *, heap: str, pagecache: str, say: Progress
) -> Iterator[tuple[GraphmemSettings, Neo4jTarget]]:
    """A local Neo4j in a new temporary home on a free port; stopped and deleted on exit,
    also when the process is ended by SIGTERM or SIGHUP."""
    from graphmem.servers.local import LocalNeo4jServer

    with (
        EndingSignals() as ending,
        tempfile.TemporaryDirectory(prefix="graphmem-bench-", ignore_cleanup_errors=True) as tmp,
    ):
        home = Path(tmp)
        scratch = load_settings(
            **{
                **settings.model_dump(),
                "neo4j_uri": "local",
                "local_neo4j_home": home,
                "local_neo4j_port": free_port(),
                "local_neo4j_heap": heap,
                "local_neo4j_pagecache": pagecache,
            }
        )
        server = LocalNeo4jServer(scratch)
        say(f"starting a throwaway Neo4j in {home} (heap {heap}, page cache {pagecache})")
        try:
            started = server.start()
            say(f"Neo4j ready at {started.status.uri} after {started.seconds:.0f} s")
            yield scratch, server.target()
        finally:
            ending.defer()  # a signal from here on waits for the server's deletion
            say("stopping the throwaway Neo4j")
            server.stop()


@contextmanager
def run_server(
    options: ServerOptions,
    settings: GraphmemSettings | None,
    target: Neo4jTarget | None,
    say: Progress,
) -> Iterator[tuple[GraphmemSettings, Neo4jTarget]]:
    """The settings and target of the Neo4j ``options`` name, for the block: a throwaway local
    server that is deleted afterwards, or ``target`` (default: the Neo4j the settings name).
    ``settings`` default to :func:`load_settings`."""
    settings = settings or load_settings()
    if options.server == "scratch":
        if target is not None:
            raise ValueError("a target is only used with server='configured'")
        with scratch_neo4j(settings, heap=options.heap, pagecache=options.pagecache, say=say) as (
            scratch,
            scratch_target,
        ):
            yield scratch, scratch_target
        return
    if target is None:
        from graphmem.servers.targets import resolve_target

        target = resolve_target(settings)
    yield settings, target


def on_server(
    options: ServerOptions,
    settings: GraphmemSettings | None,
    target: Neo4jTarget | None,
    progress: Progress | None,
    run: Callable[[GraphmemSettings, Neo4jTarget, Progress], R],
) -> R:
    """``run(settings, target, say)`` on the Neo4j ``options`` name (see :func:`run_server`);
    ``say`` is ``progress`` or a no-op."""
    say: Progress = progress or (lambda _line: None)
    with run_server(options, settings, target, say) as (run_settings, run_target):
        return run(run_settings, run_target, say)


__all__ = [
    "Progress",
    "ServerMode",
    "ServerOptions",
    "cpu_reader",
    "on_server",
    "run_server",
    "scratch_neo4j",
    "scratch_server_pid",
    "settle",
    "wait_until_idle",
]
