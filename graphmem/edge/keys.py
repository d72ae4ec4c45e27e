"""Who may call a graphmem server over HTTP (``graphmem serve``, ``graphmem mcp --transport
http``): the API key of each request, checked against the graph (the secret's hash, the key
node's MAC, revocation, expiry), its namespaces and its role. :class:`KeyGate` checks it in
front of the REST API and MCP: a request without a good key is answered 401 before it is read.

A key found good is remembered for ``cache_seconds`` (default 5), so a busy server reads a key
once in a while, not once per request; a revoked or expired key therefore stops working within
that time on every server. A key that fails is never remembered.

The server also keeps the ids of the key nodes in memory (:class:`KeyIds`), so that a key whose
id no key node has is refused without a read of its own: the ids are read again at most once
per ``id_refresh_seconds`` (default 1), when a request names an id they lack, and every request
that names one waits for a read that began after it arrived. A flood of made-up keys therefore
costs the database one read of the ids a second, and a key just made by another process works
at once (its first request waits up to a second)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from graphmem.client.aio import AsyncMemory
from graphmem.core.keys import KEY_PATTERN, MAX_KEY_IDS
from graphmem.edge.asgi import ASGIApp, Receive, Scope, Send, respond_error
from graphmem.errors import AuthenticationError, GraphmemError, PermissionDeniedError
from graphmem.models.keys import ApiKey, Role

#: Where a request's checked API key travels in the ASGI scope, to the routes and MCP tools.
SCOPE_KEY = "graphmem.api_key"
logger = logging.getLogger("graphmem.serve")

#: The most keys remembered at once; the oldest go first.
_CACHE_SIZE = 10_000


def bearer(headers: Mapping[str, str]) -> str:
    """The key an ``Authorization: Bearer <key>`` header carries; AuthenticationError when
    there is none."""
    value = headers.get("authorization")
    if value is None:
        raise AuthenticationError(
            "no API key: send it as 'Authorization: Bearer <key>' (graphmem keys create)"
        )
    scheme, _, key = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise AuthenticationError("the Authorization header must be 'Bearer <key>'")
    return key.strip()


@dataclass
class KeyCounts:
    """What the key check of one server has done since it started."""

    #: Keys answered from the cache of keys found good (no read).
    cached: int = 0
    #: Keys read and checked against their key node (one read each).
    checked: int = 0
    #: Keys refused because no key node has their id (no read of their own).
    unknown: int = 0
    #: Reads of the ids of every key node.
    id_reads: int = 0


class KeyIds:
    """The ids of the key nodes as last read, and when that read began: whether an id is
    known, and when a request that names an unknown one may have the ids read again."""

    def __init__(self, refresh_seconds: float = 1.0) -> None:
        self.refresh_seconds = refresh_seconds
        self._ids: frozenset[str] = frozenset()
        #: When the read of ``_ids`` began (monotonic seconds); None before the first.
        self.read_at: float | None = None
        #: When the last read began, whether or not it succeeded.
        self.tried_at: float | None = None
        #: Whether the graph holds more key ids than are kept: every id then counts as known.
        self.overflow = False

    def known(self, key_id: str) -> bool:
        return self.overflow or key_id in self._ids

    def answers(self, arrived: float) -> bool:
        """Whether the ids last read answer a request that arrived at ``arrived``: the read
        began after it did, so a key made before the request is among them."""
        return self.read_at is not None and self.read_at >= arrived

    def wait(self, now: float) -> float:
        """Seconds until the ids may be read again (a failed read counts too)."""
        if self.tried_at is None:
            return 0.0
        return max(0.0, self.tried_at + self.refresh_seconds - now)

    def update(self, ids: frozenset[str], read_at: float) -> None:
        self.overflow = len(ids) > MAX_KEY_IDS
        self._ids = frozenset() if self.overflow else ids
        self.read_at = read_at


class KeyCheck:
    """The keys of one server: each request's key checked (and remembered a few seconds);
    a key whose id no key node has refused without a read of its own (:class:`KeyIds`).
    ``counts`` says how each was answered."""

    def __init__(
        self,
        memory: AsyncMemory,
        *,
        cache_seconds: float = 5.0,
        id_refresh_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._memory = memory
        self._ttl = cache_seconds
        self._cache: dict[str, tuple[float, ApiKey]] = {}
        self._ids = KeyIds(id_refresh_seconds)
        self._ids_lock = asyncio.Lock()
        self._clock = clock
        self.counts = KeyCounts()

    async def _known(self, key_id: str) -> bool:
        """Whether a key node has this id, as far as the ids read answer it."""
        if self._ids.known(key_id):
            return True
        arrived = self._clock()
        async with self._ids_lock:
            if not self._ids.answers(arrived):
                await asyncio.sleep(self._ids.wait(self._clock()))
                read_at = self._ids.tried_at = self._clock()
                self.counts.id_reads += 1
                self._ids.update(await self._memory.keys.ids(), read_at)
        return self._ids.known(key_id)

    async def key(self, secret: str) -> ApiKey:
        """The live key whose secret this is; AuthenticationError otherwise."""
        digest = hashlib.sha256(secret.encode()).hexdigest()
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            self.counts.cached += 1
            return cached[1]
        shape = KEY_PATTERN.fullmatch(secret)
        if shape is None:
            raise AuthenticationError("not a graphmem API key")
        if not await self._known(shape.group(1)):
            self.counts.unknown += 1
            raise AuthenticationError("unknown API key")
        self.counts.checked += 1
        found = await self._memory.keys.check(secret)
        if self._ttl > 0:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            # Never past the key's own expiry.
            until = now + self._ttl
            if found.expires_at is not None:
                left = found.expires_at.timestamp() - time.time()
                until = min(until, now + max(left, 0))
            self._cache[digest] = (until, found)
        return found


class KeyGate:
    """ASGI: a request without a good API key is answered 401 before anything reads its body
    and goes no further; one with a good key carries it in its scope (``graphmem.api_key``)
    to the routes and the MCP tools."""

    def __init__(self, app: ASGIApp, keys: KeyCheck) -> None:
        self.app, self.keys = app, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1")
                for k, v in scope.get("headers", [])
            }
            try:
                scope[SCOPE_KEY] = await self.keys.key(bearer(headers))
            except AuthenticationError as exc:
                await respond_error(send, exc)
                return
            except GraphmemError as exc:
                # The database's own words stay in the log: the caller has no key yet.
                logger.error("an API key could not be checked: %s: %s", type(exc).__name__, exc)
                await respond_error(send, exc, "the key could not be checked")
                return
        await self.app(scope, receive, send)


def require(key: ApiKey, ns: str, role: Role) -> None:
    """Refuse (PermissionDeniedError) a namespace outside the key or a role above it."""
    if not key.opens(ns):
        raise PermissionDeniedError(
            f"the API key {key.name!r} does not open namespace {ns!r} (it opens: {key.scope()})"
        )
    if not key.allows(role):
        raise PermissionDeniedError(
            f"the API key {key.name!r} has the role {key.role!r}; this needs {role!r}"
        )


__all__ = ["SCOPE_KEY", "KeyCheck", "KeyCounts", "KeyGate", "KeyIds", "bearer", "require"]
