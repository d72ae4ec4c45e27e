"""The throwaway Neo4j of measuring runs (:mod:`graphmem.servers.scratch`): stopped and deleted
however the run ends, the wait for an idle server, and the ending signals (no Neo4j)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import SecretStr

from graphmem._signals import EndingSignals
from graphmem.servers.connection import Neo4jTarget
from graphmem.servers.processes import process_cpu_seconds
from graphmem.servers.scratch import scratch_neo4j, wait_until_idle
from graphmem.settings import load_settings


class _FakeServer:
    started: ClassVar[list[Path]] = []
    stopped: ClassVar[list[Path]] = []

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.home = settings.local_home

    def start(self) -> Any:
        assert self.home.is_dir()
        (self.home / "data").mkdir()
        _FakeServer.started.append(self.home)

        class _Status:
            uri = "bolt://127.0.0.1:1"

        class _Result:
            status = _Status()
            seconds = 1.0

        return _Result()

    def stop(self) -> bool:
        _FakeServer.stopped.append(self.home)
        return True

    def target(self) -> Neo4jTarget:
        return Neo4jTarget(uri="bolt://127.0.0.1:1", user="neo4j", password=SecretStr("x"))


def _use_scratch(lines: list[str]) -> None:
    settings = load_settings(neo4j_uri="bolt://elsewhere:7687")
    with scratch_neo4j(settings, heap="3g", pagecache="256m", say=lines.append) as (
        scratch,
        target,
    ):
        assert scratch.neo4j_uri == "local"
        assert scratch.local_neo4j_heap == "3g" and scratch.local_neo4j_pagecache == "256m"
        assert scratch.local_home == _FakeServer.started[-1]
        assert target.uri == "bolt://127.0.0.1:1"
        raise RuntimeError("boom")


def test_the_scratch_server_is_stopped_and_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("graphmem.servers.local.LocalNeo4jServer", _FakeServer)
    lines: list[str] = []
    with pytest.raises(RuntimeError, match="boom"):
        _use_scratch(lines)
    home = _FakeServer.started[-1]
    assert _FakeServer.stopped[-1] == home
    assert not home.exists()
    assert any("throwaway" in line for line in lines)


@pytest.fixture
def default_ending_signals() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT at Python's defaults for the test, whatever the runner set."""
    defaults: dict[signal.Signals, Any] = {
        signal.SIGTERM: signal.SIG_DFL,
        signal.SIGHUP: signal.SIG_DFL,
        signal.SIGINT: signal.default_int_handler,
    }
    saved = {signum: signal.getsignal(signum) for signum in defaults}
    for signum, handler in defaults.items():
        signal.signal(signum, handler)
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def _quiet_scratch() -> AbstractContextManager[object]:
    settings = load_settings(neo4j_uri="bolt://elsewhere:7687")
    return scratch_neo4j(settings, heap="1g", pagecache="64m", say=lambda _line: None)


def _signal_inside_scratch(signum: signal.Signals) -> None:
    with _quiet_scratch():
        os.kill(os.getpid(), signum)
        pytest.fail("the signal did not end the run")


@pytest.mark.usefixtures("default_ending_signals")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_an_ending_signal_stops_and_deletes_the_scratch_server(
    monkeypatch: pytest.MonkeyPatch, signum: signal.Signals
) -> None:
    monkeypatch.setattr("graphmem.servers.local.LocalNeo4jServer", _FakeServer)
    with pytest.raises(SystemExit) as ended:
        _signal_inside_scratch(signum)
    assert ended.value.code == 128 + signum
    home = _FakeServer.started[-1]
    assert _FakeServer.stopped[-1] == home
    assert not home.exists()
    # Outside the server's lifetime, the signals are back at their default.
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL


class _SignalledWhileStopping(_FakeServer):
    def stop(self) -> bool:
        os.kill(os.getpid(), signal.SIGTERM)
        return super().stop()  # not interrupted: the signal waits for the clean-up


@pytest.mark.usefixtures("default_ending_signals")
def test_a_signal_during_the_clean_up_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("graphmem.servers.local.LocalNeo4jServer", _SignalledWhileStopping)
    with pytest.raises(SystemExit) as ended, _quiet_scratch():
        pass
    assert ended.value.code == 128 + signal.SIGTERM
    home = _FakeServer.started[-1]
    assert _FakeServer.stopped[-1] == home
    assert not home.exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.usefixtures("default_ending_signals")
def test_a_handler_the_application_set_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("graphmem.servers.local.LocalNeo4jServer", _FakeServer)
    received: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: received.append(signum))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    with _quiet_scratch():
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGHUP)
    assert received == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


class _FakeClock:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def _cpu_readings(*values: float | None) -> Any:
    readings = iter(values)
    return lambda: next(readings)


def test_wait_until_idle_returns_once_a_window_passes_without_cpu_use() -> None:
    clock = _FakeClock()
    # busy for two windows (1.0 s of CPU each), then less than 5% of a 2-s window
    cpu = _cpu_readings(10.0, 11.0, 12.0, 12.05)
    waited = wait_until_idle(
        cpu, window=2.0, share=0.05, timeout=60.0, sleep=clock.sleep, clock=clock
    )
    assert waited == 6.0


def test_wait_until_idle_gives_up_after_the_timeout() -> None:
    clock = _FakeClock()
    busy = iter(range(1000))
    waited = wait_until_idle(
        lambda: float(next(busy)), window=2.0, timeout=10.0, sleep=clock.sleep, clock=clock
    )
    assert waited is None and clock.now == 10.0


@pytest.mark.parametrize("readings", [(None,), (1.0, None)])
def test_wait_until_idle_without_cpu_readings_does_not_wait(
    readings: tuple[float | None, ...],
) -> None:
    clock = _FakeClock()
    waited = wait_until_idle(_cpu_readings(*readings), window=2.0, sleep=clock.sleep, clock=clock)
    assert waited is None and clock.now <= 2.0


def test_process_cpu_seconds_reads_a_live_process_and_not_a_missing_one() -> None:
    # graphmem reads CPU time from /proc (Linux); without it this is a failure, never a skip.
    assert Path("/proc/self/stat").exists(), "no /proc on this system: these readings need Linux"
    own = process_cpu_seconds(os.getpid())
    assert own is not None and own > 0
    sum(i * i for i in range(2_000_000))  # spend some CPU
    later = process_cpu_seconds(os.getpid())
    assert later is not None and later >= own
    assert process_cpu_seconds(2**22 + 12345) is None  # above Linux's pid_max


@pytest.mark.usefixtures("default_ending_signals")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_run_that_stops_between_transactions_stops_at_its_next_check(
    signum: signal.Signals,
) -> None:
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with EndingSignals(at_once=False) as ending:
        ending.check()  # nothing asked yet
        os.kill(os.getpid(), signum)  # asks; the code goes on to its next check
        with pytest.raises(SystemExit) as stopped:
            ending.check()
        assert stopped.value.code == 128 + signum
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.usefixtures("default_ending_signals")
def test_a_second_signal_stops_a_run_at_once() -> None:
    def asked_twice() -> None:
        with EndingSignals(at_once=False):
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
            pytest.fail("the second signal did not stop the run")

    with pytest.raises(SystemExit) as stopped:
        asked_twice()
    assert stopped.value.code == 128 + signal.SIGINT
