"""What both remote clients share, with no I/O of its own: the server's URL, the API key and
the default namespace (arguments, else the settings), the headers of every request, and what
a failed exchange becomes (:class:`~graphmem.errors.ServiceError`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import SecretStr

from graphmem._version import __version__
from graphmem.core.checks import namespace
from graphmem.errors import ConfigurationError, InvalidInputError, ServiceError
from graphmem.models.bookmarks import HEADER as BOOKMARK
from graphmem.models.bookmarks import decode as bookmark_values
from graphmem.models.keys import ApiKey
from graphmem.ops.table import Operation
from graphmem.remote.call import Call, answer, model
from graphmem.settings import GraphmemSettings, load_settings, server_url

#: Seconds before each retry of a write that got no answer or a 503 (see :meth:`retry_after`).
RETRY_DELAYS = (0.25, 0.5, 1.0, 2.0, 4.0)


class RemoteBase:
    """The configuration of a remote client; :class:`~graphmem.remote.RemoteMemory` and
    :class:`~graphmem.remote.AsyncRemoteMemory` add the requests."""

    def __init__(
        self,
        url: str | None = None,
        key: str | SecretStr | None = None,
        *,
        ns: str | None = None,
        timeout: float = 60.0,
        transport: Any = None,
        settings: GraphmemSettings | None = None,
    ) -> None:
        if settings is None and (url is None or key is None or ns is None):
            settings = load_settings()
        if url is None:
            url = settings.server_url if settings is not None else None
        if url is None:
            raise ConfigurationError(
                "no graphmem serve to call: pass url=... or set GRAPHMEM_SERVER_URL"
            )
        if key is None and settings is not None:
            key = settings.api_key
        secret = key.get_secret_value() if isinstance(key, SecretStr) else key
        if not isinstance(secret, str) or not secret.strip():
            raise ConfigurationError(
                "no API key for graphmem serve: pass key=... or set GRAPHMEM_API_KEY (made "
                "with `graphmem keys create`)"
            )
        try:
            #: The server's base URL, without a trailing slash.
            self.url = server_url(url)
        except ValueError as exc:
            raise ConfigurationError(f"the server URL: {exc}") from None
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise InvalidInputError(f"timeout must be a number of seconds above 0, got {timeout!r}")
        #: Seconds one request may take.
        self.timeout = float(timeout)
        #: The namespace a call that names none uses (default: ``GRAPHMEM_NAMESPACE``; when
        #: neither ``ns`` nor that setting is given, the key's only namespace if it opens just
        #: one, asked of the server before the first call that needs a namespace).
        self.ns = namespace(ns, settings.namespace if settings is not None else None)
        self._ns_chosen = ns is not None or (
            settings is not None and "namespace" in settings.model_fields_set
        )
        self._key = SecretStr(secret.strip())
        #: The httpx client, over ``transport`` when one is given (an httpx transport of the
        #: client's kind, sync or async: tests pass a MockTransport).
        self._http = self._open(transport)

    def _open(self, transport: Any) -> Any:
        """The httpx client of this transport (sync or async)."""
        raise NotImplementedError  # pragma: no cover - each transport defines it

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r}, ns={self.ns!r})"

    def headers(self) -> dict[str, str]:
        """The headers of every request: the API key, and who asks."""
        return {
            "Authorization": f"Bearer {self._key.get_secret_value()}",
            "Accept": "application/json",
            "User-Agent": f"graphmem/{__version__}",
        }

    #: The ``Graphmem-Bookmark`` of the last write the server answered: sent with every later
    #: request, so that it sees that write on whichever serve process answers it.
    bookmark: str | None = None

    def _following(self) -> dict[str, str]:
        """The headers that make a request follow this client's last write."""
        return {BOOKMARK: self.bookmark} if self.bookmark else {}

    def _note(self, response: httpx.Response) -> None:
        """Keep the bookmark a write's answer carries (one the client cannot read is not
        kept: it would only be refused later)."""
        value = response.headers.get(BOOKMARK)
        if value:
            try:
                bookmark_values(value)
            except InvalidInputError:
                return
            self.bookmark = value

    def client_options(self) -> dict[str, Any]:
        """The options of the httpx client: the base URL, the headers and the timeout. An
        http:// server is never spoken to over TLS (redirects are not followed), so its client
        loads no certificates, some 50 ms of every command's start."""
        return {
            "base_url": self.url,
            "headers": self.headers(),
            "timeout": self.timeout,
            "verify": self.url.startswith("https://"),
            "follow_redirects": False,
        }

    #: The waits before the retries of a write (as many retries as waits).
    retry_delays: tuple[float, ...] = RETRY_DELAYS

    def retry_after(
        self,
        call: Call[Any],
        attempt: int,
        *,
        status: int | None = None,
        error: httpx.HTTPError | None = None,
    ) -> float | None:
        """Seconds to wait before sending ``call`` again after its ``attempt``-th try (from 0)
        failed with ``error`` or answered ``status``; None: not again. A write is sent again
        with its idempotency key when the server answers it once per key (:attr:`Call.recorded`)
        and the exchange broke or the server answered 503 (Neo4j unavailable); any write is
        sent again when it could not connect (nothing reached the server). Reads are not."""
        if not call.writes or attempt >= len(self.retry_delays):
            return None
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
            return self.retry_delays[attempt]
        lost = isinstance(error, httpx.ReadError | httpx.WriteError | httpx.RemoteProtocolError)
        if call.recorded and (lost or status == 503):
            return self.retry_delays[attempt]
        return None

    def failure(self, exc: httpx.HTTPError, call: Call[Any] | None = None) -> ServiceError:
        """What an exchange that got no answer becomes: a ServiceError that says why."""
        what = f"{call.method} {call.path}" if call is not None else "the request"
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return ServiceError(
                f"graphmem serve could not be reached at {self.url} ({exc or type(exc).__name__}):"
                " is it running there? (GRAPHMEM_SERVER_URL)"
            )
        if isinstance(exc, httpx.TimeoutException):
            return ServiceError(
                f"graphmem serve at {self.url} did not answer {what} within {self.timeout:g} s"
                + _maybe_written(call)
            )
        return ServiceError(
            f"the exchange with graphmem serve at {self.url} failed during {what}: "
            f"{exc or type(exc).__name__}" + _maybe_written(call)
        )

    def _keys_namespace(self, status: int, body: bytes) -> None:
        """Make the key's only namespace (``GET /v1/key`` answered ``status`` and ``body``) the
        default, when it opens exactly one and no prefix; a server without that route (404)
        leaves ``GRAPHMEM_NAMESPACE``'s default in place."""
        self._ns_chosen = True
        if status == 404:
            return
        key = answer(key_call(), status, body)
        if len(key.namespaces) == 1 and key.prefix is None:
            self.ns = key.namespaces[0]

    def _needs_namespace(self, op: Operation, args: Mapping[str, Any]) -> bool:
        """Whether ``op`` will use the default namespace, which is not decided yet."""
        return not self._ns_chosen and "{ns}" in op.path and args.get("ns") is None


def key_call() -> Call[ApiKey]:
    """``GET /v1/key``: the request's own API key (its scope and role)."""
    return Call("GET", "/v1/key", model(ApiKey))


def ready_call() -> Call[None]:
    """``GET /ready``: whether the server is warm and reaches its Neo4j."""
    return Call("GET", "/ready", _ready)


def _ready(body: bytes) -> None:
    """Nothing: a 200 answer from ``/ready`` is the news."""


def not_ready(status: int, body: Any) -> ServiceError:
    """The error of a ``/ready`` that answered something other than 200."""
    reason = (body.get("reason") or body.get("status")) if isinstance(body, dict) else body
    return ServiceError(
        f"graphmem serve is not ready (HTTP {status}): {reason!s:.300}", status=status
    )


def _maybe_written(call: Call[Any] | None) -> str:
    if call is not None and call.writes:
        return "; the change may or may not have been made: check before sending it again"
    return ""


__all__ = ["RETRY_DELAYS", "RemoteBase", "key_call", "not_ready", "ready_call"]
