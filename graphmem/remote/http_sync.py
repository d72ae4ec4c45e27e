# Generated from graphmem/remote/http_aio.py by tools/unasync.py: edit that file, then run it.
"""The HTTP transport of the async client: each operation sent to a ``graphmem serve`` as the
request :mod:`graphmem.remote.wire` builds, with httpx; a write sent again with its
idempotency key when the exchange broke or the server answered 503, an export read line by
line as it streams. :mod:`graphmem.remote.http_sync` is generated from this file by
``tools/unasync.py``; edit this one."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx

from graphmem.errors import ServiceError
from graphmem.ops.table import Operation
from graphmem.remote.base import RemoteBase, key_call, not_ready, ready_call
from graphmem.remote.call import Call, answer, error_data, export_record, refuse_awaitable
from graphmem.remote.wire import call_of

if TYPE_CHECKING:
    from graphmem.remote import RemoteMemory


class HttpTransport(RemoteBase):
    """Sends the operations of an async client to ``graphmem serve`` over HTTP."""

    _http: httpx.Client

    def _open(self, transport: httpx.BaseTransport | None) -> httpx.Client:
        return httpx.Client(**self.client_options(), transport=transport)

    def connect(self) -> RemoteMemory:
        """Check now, rather than on first use, that the server answers and is ready."""
        call = ready_call()
        response = self._exchange(call)
        if response.status_code != 200:
            raise not_ready(response.status_code, error_data(response.content))
        return self  # type: ignore[return-value]

    def close(self) -> None:
        """Close the connections to the server."""
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self  # type: ignore[return-value]

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, op: Operation, args: Mapping[str, Any]) -> Any:
        """The result of ``op`` with the library's keyword arguments ``args``."""
        if self._needs_namespace(op, args):
            try:
                asked = self._exchange(key_call())
            except ServiceError:
                pass  # no answer: the call itself, sent to the default namespace, says why
            else:
                self._keys_namespace(asked.status_code, asked.content)
        call = call_of(op, args, self.ns)
        if op.streamed and op.http == "GET":
            return self._records(call)
        response = self._exchange(call)
        result = answer(call, response.status_code, response.content)
        counts = call.progress_args(result)
        if counts is not None and call.progress is not None:
            refuse_awaitable(call.progress(*counts))
        return result

    def _exchange(self, call: Call[Any]) -> httpx.Response:
        """The answer to ``call``; a write is sent again, with the same idempotency key,
        as :meth:`retry_after` says."""
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    call.method,
                    call.path,
                    params=call.query(),
                    json=call.json,
                    content=call.content,
                    headers={**call.headers(), **self._following()},
                )
            except httpx.HTTPError as exc:
                wait = self.retry_after(call, attempt, error=exc)
                if wait is None:
                    raise self.failure(exc, call) from exc
            else:
                wait = self.retry_after(call, attempt, status=response.status_code)
                if wait is None:
                    self._note(response)
                    return response
            time.sleep(wait)
            attempt += 1

    @contextmanager
    def _lines(self, call: Call[Any]) -> Iterator[Iterator[str]]:
        """The lines of a streamed answer as they come."""
        try:
            with self._http.stream(call.method, call.path, headers=self._following()) as response:
                if not 200 <= response.status_code < 300:
                    answer(call, response.status_code, response.read())
                yield response.iter_lines()
        except httpx.HTTPError as exc:
            raise self.failure(exc, call) from exc

    def _records(self, call: Call[Any]) -> Iterator[dict[str, Any]]:
        """An export's records as the server streams them."""
        with self._lines(call) as lines:
            numbers = itertools.count(1)
            for line in lines:
                record = export_record(line, next(numbers))
                if record is not None:
                    yield record


__all__ = ["HttpTransport"]
