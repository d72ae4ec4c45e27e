"""The HTTP transport of the async client: each operation sent to a ``graphmem serve`` as the
request :mod:`graphmem.remote.wire` builds, with httpx; a write sent again with its
idempotency key when the exchange broke or the server answered 503, an export read line by
line as it streams. :mod:`graphmem.remote.http_sync` is generated from this file by
``tools/unasync.py``; edit this one."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import httpx

from graphmem.errors import ServiceError
from graphmem.ops.table import Operation
from graphmem.remote.base import RemoteBase, key_call, not_ready, ready_call
from graphmem.remote.call import Call, answer, awaited, error_data, export_record
from graphmem.remote.wire import call_of

if TYPE_CHECKING:
    from graphmem.remote import AsyncRemoteMemory


class AsyncHttpTransport(RemoteBase):
    """Sends the operations of an async client to ``graphmem serve`` over HTTP."""

    _http: httpx.AsyncClient

    def _open(self, transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
        return httpx.AsyncClient(**self.client_options(), transport=transport)

    async def connect(self) -> AsyncRemoteMemory:
        """Check now, rather than on first use, that the server answers and is ready."""
        call = ready_call()
        response = await self._exchange(call)
        if response.status_code != 200:
            raise not_ready(response.status_code, error_data(response.content))
        return self  # type: ignore[return-value]

    async def close(self) -> None:
        """Close the connections to the server."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRemoteMemory:
        return self  # type: ignore[return-value]

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _send(self, op: Operation, args: Mapping[str, Any]) -> Any:
        """The result of ``op`` with the library's keyword arguments ``args``."""
        if self._needs_namespace(op, args):
            try:
                asked = await self._exchange(key_call())
            except ServiceError:
                pass  # no answer: the call itself, sent to the default namespace, says why
            else:
                self._keys_namespace(asked.status_code, asked.content)
        call = call_of(op, args, self.ns)
        if op.streamed and op.http == "GET":
            return self._records(call)
        response = await self._exchange(call)
        result = answer(call, response.status_code, response.content)
        counts = call.progress_args(result)
        if counts is not None and call.progress is not None:
            await awaited(call.progress(*counts))
        return result

    async def _exchange(self, call: Call[Any]) -> httpx.Response:
        """The answer to ``call``; a write is sent again, with the same idempotency key,
        as :meth:`retry_after` says."""
        attempt = 0
        while True:
            try:
                response = await self._http.request(
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
            await asyncio.sleep(wait)
            attempt += 1

    @asynccontextmanager
    async def _lines(self, call: Call[Any]) -> AsyncIterator[AsyncIterator[str]]:
        """The lines of a streamed answer as they come."""
        try:
            async with self._http.stream(
                call.method, call.path, headers=self._following()
            ) as response:
                if not 200 <= response.status_code < 300:
                    answer(call, response.status_code, await response.aread())
                yield response.aiter_lines()
        except httpx.HTTPError as exc:
            raise self.failure(exc, call) from exc

    async def _records(self, call: Call[Any]) -> AsyncIterator[dict[str, Any]]:
        """An export's records as the server streams them."""
        async with self._lines(call) as lines:
            numbers = itertools.count(1)
            async for line in lines:
                record = export_record(line, next(numbers))
                if record is not None:
                    yield record


__all__ = ["AsyncHttpTransport"]
