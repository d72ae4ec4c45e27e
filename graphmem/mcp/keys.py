"""Who may call a graphmem server over HTTP (``graphmem serve``, ``graphmem mcp --transport
http``): the API key of each request, checked against the graph (the secret's hash, the key
node's MAC, revocation, expiry), its namespaces and its role.

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
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from graphmem.client.aio import AsyncMemory
from graphmem.core.keys import KEY_PATTERN, MAX_KEY_IDS
from graphmem.errors import AuthenticationError, PermissionDeniedError
from graphmem.models.keys import ApiKey, Role

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


__all__ = ["KeyCheck", "KeyCounts", "KeyIds", "bearer", "require"]
