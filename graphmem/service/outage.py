"""Neo4j's availability as the service sees it, and the quick answer while it is away.

A probe on a driver of its own (one connection, so that a busy pool never delays it) asks
Neo4j every second whether it answers (a Bolt RESET on a live connection, or a new connection),
and every half second while it does not. A probe that fails or takes longer than two seconds
marks Neo4j down; a request that ends in a 503 makes the probe look again at once. While
Neo4j is down, every keyed request is answered 503 with ``Retry-After`` before its key is
checked or its body read; a reading REST request in flight when Neo4j goes down is stopped and
answered 503 too. A write in flight runs on: one stopped half way could have committed some
of its work, and the driver's retries (``GRAPHMEM_NEO4J_MAX_RETRY_TIME``) bound its wait.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import neo4j
from neo4j.exceptions import DriverError, Neo4jError

from graphmem.edge.asgi import ASGIApp, Receive, Scope, Send, respond_error
from graphmem.errors import Neo4jUnavailableError
from graphmem.servers.connection import Neo4jTarget, open_async_driver

logger = logging.getLogger("graphmem.serve")

#: Seconds a client is asked to wait before trying again while Neo4j is down.
RETRY_AFTER_SECONDS = 1


class Availability:
    """Whether Neo4j answers, kept up to date by a probe that runs while the service does."""

    def __init__(self, *, every: float = 1.0, every_down: float = 0.5, timeout: float = 2.0):
        self.every, self.every_down, self.timeout = every, every_down, timeout
        #: Whether Neo4j answered the last probe (True until the first one says otherwise).
        self.up = True
        self._driver: neo4j.AsyncDriver | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._probing: asyncio.Future[str | None] | None = None
        self._on_down: set[Callable[[], None]] = set()

    async def start(self, target: Neo4jTarget) -> None:
        """Start probing ``target``."""
        self._driver = await open_async_driver(
            target,
            verify=False,
            connection_timeout=self.timeout,
            options={
                "max_connection_pool_size": 1,
                "connection_acquisition_timeout": self.timeout,
            },
        )
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._watch(), name="graphmem-neo4j-probe")

    async def stop(self) -> None:
        """Stop probing."""
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._probing is not None:
            self._probing.cancel()
            with suppress(asyncio.CancelledError):
                await self._probing
            self._probing = None
        if self._driver is not None:
            await self._driver.close()
            self._driver = None

    def suspect(self) -> None:
        """Probe again now (a request met a database that did not answer)."""
        if self._wake is not None:
            self._wake.set()

    def on_down(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` when Neo4j is found down; returns what stops that."""
        self._on_down.add(callback)
        return lambda: self._on_down.discard(callback)

    async def check(self) -> str | None:
        """Probe now: None when Neo4j answers, else why not (the state follows the answer).
        Callers at the same moment share one probe (its driver has one connection)."""
        if self._probing is None or self._probing.done():
            self._probing = asyncio.ensure_future(self._probe())
        reason = await asyncio.shield(self._probing)
        self._record(reason)
        return reason

    async def _probe(self) -> str | None:
        if self._driver is None:
            return "the probe is not running"
        try:
            async with asyncio.timeout(self.timeout + 1.0):
                await self._driver.verify_connectivity()
        except (Neo4jError, DriverError, OSError, TimeoutError) as exc:
            return f"{type(exc).__name__}: {exc}".rstrip(": ")
        return None

    async def _watch(self) -> None:
        assert self._wake is not None
        while True:
            await self.check()
            with suppress(TimeoutError):
                async with asyncio.timeout(self.every if self.up else self.every_down):
                    await self._wake.wait()
            self._wake.clear()

    def _record(self, reason: str | None) -> None:
        if reason is None:
            if not self.up:
                logger.warning("Neo4j answers again: serving requests")
            self.up = True
            return
        if self.up:
            logger.error("Neo4j does not answer (%s): answering 503 until it does", reason)
            self.up = False
            for callback in list(self._on_down):
                callback()


class Outage:
    """ASGI, in front of a keyed app: while Neo4j is down each request is answered 503 at
    once; a request that ``stoppable`` names (method, path), in flight when Neo4j goes down
    and not yet answering, is stopped and answered 503; any 503 makes the probe look again."""

    def __init__(
        self,
        app: ASGIApp,
        availability: Availability,
        stoppable: Callable[[str, str], bool] = lambda method, path: False,
    ) -> None:
        self.app, self.availability, self.stoppable = app, availability, stoppable

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self.availability.up:
            await self._unavailable(send)
            return
        status = 0

        async def watched_send(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        task, lost = asyncio.current_task(), False

        def stop() -> None:
            nonlocal lost
            if task is not None and not lost and status == 0:
                lost = True
                task.cancel()

        stoppable = task is not None and self.stoppable(scope.get("method", ""), scope["path"])
        forget = self.availability.on_down(stop) if stoppable else None
        try:
            await self.app(scope, receive, watched_send)
        except asyncio.CancelledError:
            if not lost or task is None or task.uncancel() > 0:
                raise
            await self._unavailable(send)
        finally:
            if forget is not None:
                forget()
            if status == 503:
                self.availability.suspect()

    @staticmethod
    async def _unavailable(send: Send) -> None:
        error = Neo4jUnavailableError(
            "Neo4j is unavailable; this server checks it twice a second and serves again as "
            f"soon as it answers: try again in {RETRY_AFTER_SECONDS} s"
        )
        await respond_error(send, error, headers={"retry-after": str(RETRY_AFTER_SECONDS)})


__all__ = ["RETRY_AFTER_SECONDS", "Availability", "Outage"]
