"""Who may call a graphmem server over HTTP (``graphmem serve``, ``graphmem mcp --transport
http``): the API key of each request, checked against the graph (the secret's hash,
revocation, expiry), its namespaces and its role.

A key found good is remembered for ``cache_seconds`` (default 5), so a busy server reads a key
once in a while, not once per request; a revoked or expired key therefore stops working within
that time on every server. A key that fails is never remembered."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping

from graphmem.client.aio import AsyncMemory
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


class KeyCheck:
    """The keys of one server: each request's key checked (and remembered a few seconds)."""

    def __init__(self, memory: AsyncMemory, *, cache_seconds: float = 5.0) -> None:
        self._memory = memory
        self._ttl = cache_seconds
        self._cache: dict[str, tuple[float, ApiKey]] = {}

    async def key(self, secret: str) -> ApiKey:
        """The live key whose secret this is; AuthenticationError otherwise."""
        digest = hashlib.sha256(secret.encode()).hexdigest()
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            return cached[1]
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


__all__ = ["KeyCheck", "bearer", "require"]
