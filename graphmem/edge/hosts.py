"""Which ``Host`` and ``Origin`` a request to a graphmem server may carry.

A browser page on another site can reach a server on the user's own machine by rebinding its
own host name to 127.0.0.1 (DNS rebinding); the request then carries that site's name in
``Host`` and its origin in ``Origin``. :class:`HostOriginCheck` lets a request through only
when its ``Host`` is exactly one of the allowed names (the address the server binds, by
default) and its ``Origin``, when it has one, is exactly one of the allowed origins: exact
matches, not prefixes, so ``http://127.0.0.1:1@evil.example`` is not ``http://127.0.0.1``.
Clients that are not browsers send no ``Origin`` and pass on ``Host`` alone.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from graphmem.edge.asgi import ASGIApp, Receive, Scope, Send
from graphmem.errors import ConfigurationError

#: Addresses that accept connections on every interface: no one name is "the" server's.
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})


@dataclass(frozen=True)
class EdgePolicy:
    """The ``Host`` values and ``Origin`` values (lower case) a request may carry."""

    hosts: frozenset[str]
    origins: frozenset[str]

    def describe(self) -> str:
        return f"Host {', '.join(sorted(self.hosts))}; Origin {', '.join(sorted(self.origins))}"


def edge_policy(
    bind: str, port: int, hosts: Iterable[str] = (), origins: Iterable[str] = ()
) -> EdgePolicy:
    """What a server bound to ``bind``:``port`` accepts. Given ``hosts`` and ``origins`` are
    added to the defaults: the bound address (with ``localhost`` for 127.0.0.1 and ::1), with
    the port (and without it on port 80). Every allowed host is also an origin, with
    ``http://`` before it; a given host, which may be a proxy's name in front of the server,
    with ``https://`` too. A wildcard bind (0.0.0.0, ::) has no name of its own: it needs
    ``hosts``."""
    given_hosts = {h.strip().lower() for h in hosts if h.strip()}
    given_origins = {o.strip().lower().rstrip("/") for o in origins if o.strip()}
    names: list[str] = []
    if bind in _WILDCARDS:
        if not given_hosts:
            raise ConfigurationError(
                f"bound to every interface ({bind or 'all'}), the server has no name of its own "
                "to check the Host header against: give the names clients use with --allow-host "
                "(for example --allow-host memory.example.com:8765)"
            )
    else:
        names.append(_host_name(bind))
        if bind in ("127.0.0.1", "::1"):
            names.append("localhost")
    defaults = {f"{name}:{port}" for name in names}
    if port == 80:
        defaults |= set(names)
    allowed_hosts = {h.lower() for h in defaults} | given_hosts
    allowed_origins = (
        {f"http://{h}" for h in allowed_hosts}
        | {f"https://{h}" for h in given_hosts}
        | given_origins
    )
    return EdgePolicy(frozenset(allowed_hosts), frozenset(allowed_origins))


def _host_name(address: str) -> str:
    """An address as it appears in a Host header: IPv6 in brackets."""
    try:
        if isinstance(ipaddress.ip_address(address), ipaddress.IPv6Address):
            return f"[{address}]"
    except ValueError:
        pass
    return address


class HostOriginCheck:
    """ASGI middleware: HTTP requests and WebSocket handshakes whose ``Host`` or ``Origin`` the
    policy does not allow get 421 or 403 and never reach ``app``; other scopes (lifespan)
    pass through."""

    def __init__(self, app: ASGIApp, policy: EdgePolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            refusal = self._refusal(scope)
            if refusal is not None:
                await _refuse(scope, send, *refusal)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and text that refuse this request, or None when it may pass."""
        hosts = _header(scope, b"host")
        origins = _header(scope, b"origin")
        if len(hosts) != 1 or hosts[0].lower() not in self.policy.hosts:
            return 421, "Invalid Host header"
        if len(origins) > 1 or (
            origins and origins[0].lower().rstrip("/") not in self.policy.origins
        ):
            return 403, "Invalid Origin header"
        return None


def _header(scope: Scope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope.get("headers", []) if key == name]


async def _refuse(scope: Scope, send: Send, status: int, text: str) -> None:
    """An HTTP response of ``status``. A WebSocket handshake gets the same response where the
    server takes one (the ASGI denial-response extension), and otherwise is closed before it
    is accepted, which the server answers with 403."""
    prefix = ""
    if scope["type"] == "websocket":
        if "websocket.http.response" not in (scope.get("extensions") or {}):
            await send({"type": "websocket.close", "code": 1008, "reason": text})
            return
        prefix = "websocket."
    body = text.encode()
    await send(
        {
            "type": f"{prefix}http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": f"{prefix}http.response.body", "body": body})


__all__ = ["EdgePolicy", "HostOriginCheck", "edge_policy"]
