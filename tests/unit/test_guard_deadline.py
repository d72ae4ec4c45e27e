"""When the guarded read path stops waiting: each step (the plan check, each attempt of the
read transaction) has the time limit, not their sum. A scripted driver stands in for Neo4j so
that a retried attempt can be timed; the path itself is tested against Neo4j in
tests/integration/test_guarded_read.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest

from graphmem.errors import TransactionTimeoutError
from graphmem.store import guard

TIMEOUT = 0.2
STEP = TIMEOUT + guard.DEADLINE_MARGIN


class _Result(list[dict[str, Any]]):
    def keys(self) -> list[str]:
        return ["x"]

    def consume(self) -> None:
        return None


class _Tx:
    def run(self, text: str, params: dict[str, Any]) -> _Result:
        return _Result([{"x": 1}])


class _Session:
    """Plans at once; its read transaction runs ``attempts`` times (the driver's retries),
    each taking ``seconds``, and the last one answers."""

    def __init__(self, attempts: int, seconds: float) -> None:
        self.attempts, self.seconds = attempts, seconds

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, query: Any, params: dict[str, Any]) -> Any:
        summary = SimpleNamespace(plan=None, query_type="r")
        return SimpleNamespace(consume=lambda: summary)

    def execute_read(self, work: Callable[..., Any], *args: Any) -> Any:
        for _ in range(self.attempts - 1):
            work(_Tx(), *args)  # an attempt that fails on a passing error, then is retried
            time.sleep(self.seconds)
        answer = work(_Tx(), *args)
        time.sleep(self.seconds)
        return answer


class _AsyncResult:
    def __init__(self) -> None:
        self.rows = iter([{"x": 1}])

    def keys(self) -> list[str]:
        return ["x"]

    async def consume(self) -> None:
        return None

    def __aiter__(self) -> _AsyncResult:
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            return next(self.rows)
        except StopIteration:
            raise StopAsyncIteration from None


class _AsyncTx:
    async def run(self, text: str, params: dict[str, Any]) -> _AsyncResult:
        return _AsyncResult()


class _AsyncSession(_Session):
    async def __aenter__(self) -> _AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def run(self, query: Any, params: dict[str, Any]) -> Any:
        async def consume() -> Any:
            return SimpleNamespace(plan=None, query_type="r")

        return SimpleNamespace(consume=consume)

    async def execute_read(self, work: Callable[..., Any], *args: Any) -> Any:
        for _ in range(self.attempts - 1):
            await work(_AsyncTx(), *args)
            await asyncio.sleep(self.seconds)
        answer = await work(_AsyncTx(), *args)
        await asyncio.sleep(self.seconds)
        return answer


@contextmanager
def _driver(session: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setattr(guard, "check_plan", lambda *args: None)
    monkeypatch.setattr(guard, "check_secrets", lambda *args: None)
    monkeypatch.setattr(guard, "_hide_secrets", lambda *args: None)

    async def hide_nothing(*args: Any) -> None:
        return None

    monkeypatch.setattr(guard, "_hide_secrets_async", hide_nothing)
    yield SimpleNamespace(session=lambda **_: session)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_retried_read_gets_the_limit_for_each_attempt(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two attempts of 0.6 of a step each: over a step together, each within its own."""
    seconds = STEP * 0.6
    with _driver((_Session if kind == "sync" else _AsyncSession)(2, seconds), monkeypatch) as d:
        if kind == "sync":
            rows = guard.guarded_read(d, "neo4j", "RETURN 1 AS x", timeout=TIMEOUT, limit=10)
        else:
            read = guard.guarded_read_async(d, "neo4j", "RETURN 1 AS x", timeout=TIMEOUT, limit=10)
            rows = asyncio.run(read)
    assert [dict(r) for r in rows.records] == [{"x": 1}]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_one_attempt_past_its_limit_is_not_waited_for(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _driver((_Session if kind == "sync" else _AsyncSession)(1, STEP * 2), monkeypatch) as d:

        def read() -> Any:
            if kind == "sync":
                return guard.guarded_read(d, "neo4j", "RETURN 1 AS x", timeout=TIMEOUT, limit=10)
            return asyncio.run(
                guard.guarded_read_async(d, "neo4j", "RETURN 1 AS x", timeout=TIMEOUT, limit=10)
            )

        began = time.monotonic()
        with pytest.raises(TransactionTimeoutError, match="past its time limit"):
            read()
        assert time.monotonic() - began < STEP * 1.5
