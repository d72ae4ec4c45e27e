"""The service's answer while Neo4j is down (the ASGI logic alone; the whole behaviour against a
real Neo4j and `graphmem serve` is in tests/integration/test_serve_outage.py), and the request
deadline as a transaction time limit."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from graphmem.client.base import deadline, time_limited
from graphmem.service.outage import Availability, Outage


async def _call(
    outage: Outage, method: str = "GET", *, while_running: Any = None
) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/v1/namespaces/a/search", "headers": []}
    request = asyncio.create_task(outage(scope, receive, send))
    await asyncio.sleep(0.01)
    if while_running is not None:
        while_running()
    await asyncio.wait_for(request, 5)
    return sent


def _status(sent: list[dict[str, Any]]) -> int:
    return int(sent[0]["status"])


def test_while_neo4j_is_down_every_request_is_answered_503_without_reaching_the_app() -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    availability = Availability()
    availability._record("ServiceUnavailable: refused")
    sent = asyncio.run(_call(Outage(app, availability)))
    assert _status(sent) == 503 and reached == []
    assert (b"retry-after", b"1") in sent[0]["headers"]
    assert json.loads(sent[1]["body"])["error"]["type"] == "Neo4jUnavailableError"


def test_a_stoppable_request_in_flight_is_answered_503_when_neo4j_goes_down() -> None:
    async def hanging(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(60)

    availability = Availability()
    outage = Outage(hanging, availability, lambda method, path: method == "GET")
    began = time.monotonic()
    sent = asyncio.run(_call(outage, while_running=lambda: availability._record("gone")))
    assert _status(sent) == 503 and time.monotonic() - began < 5
    assert not availability._on_down  # the request stopped watching


def test_a_request_not_named_stoppable_runs_on_and_answers_itself() -> None:
    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(0.1)
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    availability = Availability()
    outage = Outage(slow, availability, lambda method, path: method == "GET")
    sent = asyncio.run(_call(outage, "POST", while_running=lambda: availability._record("gone")))
    assert _status(sent) == 201


def test_back_up_after_a_good_probe() -> None:
    availability = Availability()
    availability._record("gone")
    assert not availability.up
    availability._record(None)
    assert availability.up


def test_the_request_deadline_bounds_each_transaction() -> None:
    def body(tx: Any) -> None:
        return None

    assert not hasattr(time_limited(body, None), "timeout")
    assert time_limited(body, 120.0).timeout == 120.0  # type: ignore[attr-defined]
    with deadline(3.0):
        assert 2.0 < time_limited(body, 120.0).timeout <= 3.0  # type: ignore[attr-defined]
        assert 2.0 < time_limited(body, None).timeout <= 3.0  # type: ignore[attr-defined]
        assert time_limited(body, 1.0).timeout == 1.0  # type: ignore[attr-defined]
    assert time_limited(body, 120.0).timeout == 120.0  # type: ignore[attr-defined]
