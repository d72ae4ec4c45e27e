"""When the remote clients send a write again: with the same idempotency key, after a broken
exchange or a 503, for the writes the server answers once per key; never a read, never past
the retries allowed (the server here is a fake transport: the logic is the client's alone)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from graphmem.errors import ServiceError, TransientDatabaseError
from graphmem.remote import AsyncRemoteMemory, RemoteMemory

FACT = {
    "id": "11111111-1111-4111-8111-111111111111",
    "ns": "n",
    "text": "x",
    "status": "active",
    "recorded_at": "2026-01-01T00:00:00Z",
    "valid_from": "2026-01-01T00:00:00Z",
    "text_hash": "0" * 64,
}
BUSY = {"error": {"type": "TransientDatabaseError", "message": "Neo4j is unavailable"}}


class Script:
    """Answers each request with the next of ``steps``: a status (with a body) or an error
    to raise; records each request's method, path and idempotency key."""

    def __init__(self, *steps: int | type[httpx.TransportError]) -> None:
        self.steps = list(steps)
        self.seen: list[tuple[str, str, str | None]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append((request.method, request.url.path, request.headers.get("Idempotency-Key")))
        step = self.steps.pop(0)
        if isinstance(step, type):
            raise step("broken", request=request)
        body = FACT if step < 300 else BUSY
        return httpx.Response(step, content=json.dumps(body).encode())


def _remote(script: Script) -> RemoteMemory:
    remote = RemoteMemory(
        "http://graphmem.test", "k", ns="n", transport=httpx.MockTransport(script)
    )
    remote.retry_delays = (0.0, 0.0, 0.0)
    return remote


@pytest.mark.parametrize(
    "steps",
    [
        (503, 201),
        (httpx.ReadError, 201),
        (httpx.ConnectError, httpx.RemoteProtocolError, 503, 201),
    ],
)
def test_a_write_is_sent_again_with_the_same_key(steps: tuple[int | type, ...]) -> None:
    script = Script(*steps)
    with _remote(script) as remote:
        assert remote.remember("x").id == FACT["id"]
    keys = {key for _, _, key in script.seen}
    assert len(script.seen) == len(steps) and len(keys) == 1 and None not in keys
    with _remote(Script(201)) as remote:  # each call its own key
        remote.remember("x")


def test_retries_end_and_reads_are_not_sent_again() -> None:
    script = Script(503, 503, 503, 503)
    with _remote(script) as remote, pytest.raises(TransientDatabaseError):
        remote.remember("x")
    assert len(script.seen) == 4  # the first try and three retries
    script = Script(503)
    with _remote(script) as remote, pytest.raises(TransientDatabaseError):
        remote.get(FACT["id"])
    assert script.seen == [("GET", f"/v1/namespaces/n/memories/{FACT['id']}", None)]
    script = Script(httpx.ReadTimeout)
    with _remote(script) as remote, pytest.raises(ServiceError, match="may or may not"):
        remote.remember("x")
    assert len(script.seen) == 1  # a write still running on the server is not sent again


def test_the_async_client_sends_a_write_again_with_the_same_key() -> None:
    script = Script(httpx.ReadError, 503, 201)

    async def run() -> str:
        transport = httpx.MockTransport(script)
        async with AsyncRemoteMemory(
            "http://graphmem.test", "k", ns="n", transport=transport
        ) as remote:
            remote.retry_delays = (0.0, 0.0)
            return (await remote.remember("x")).id

    assert asyncio.run(run()) == FACT["id"]
    assert len(script.seen) == 3 and len({key for _, _, key in script.seen}) == 1
