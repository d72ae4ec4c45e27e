"""Where graphmem's Neo4j is and how to open a driver to it.

Driver errors met while connecting are mapped here to :class:`Neo4jUnavailableError`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable
from pydantic import SecretStr

from graphmem._version import __version__
from graphmem.errors import ConfigurationError, Neo4jUnavailableError

TargetMode = Literal["local", "docker", "external"]


@dataclass(frozen=True)
class Neo4jTarget:
    """A Neo4j to connect to: address, credentials (never printed) and database."""

    uri: str
    user: str
    password: SecretStr = field(repr=False)
    database: str = "neo4j"
    mode: TargetMode = "external"

    def describe(self) -> str:
        return f"{self.uri} (database {self.database!r}, {self.mode})"


def _driver_options(
    target: Neo4jTarget, connection_timeout: float, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    return {
        **(extra or {}),
        "auth": (target.user, target.password.get_secret_value()),
        "connection_timeout": connection_timeout,
        "user_agent": f"graphmem/{__version__}",
        # A fresh graph lacks the labels and properties that queries name; the server's
        # "does not exist" hints about that are noise, everything else is kept.
        "notifications_disabled_classifications": [
            neo4j.NotificationDisabledClassification.UNRECOGNIZED
        ],
    }


def _verify_options(connection_timeout: float) -> dict[str, Any]:
    # The driver's connection_timeout bounds the TCP connect only; the Bolt handshake and the
    # authentication wait for connection_acquisition_timeout (60 s by default). Verifying with
    # the connection timeout as that bound makes a port whose listener never speaks Bolt fail
    # as fast as one where nothing listens. (The driver keeps its 60 s for later acquisitions,
    # which may wait for a free connection of a busy pool.)
    return {"connection_acquisition_timeout": connection_timeout}


@contextmanager
def _verify_options_allowed() -> Iterator[None]:
    """Silence the driver's note that options to ``verify_connectivity`` are a preview."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="Passing key-word arguments to verify_connectivity"
        )
        yield


def open_driver(
    target: Neo4jTarget,
    *,
    verify: bool = True,
    connection_timeout: float = 15.0,
    options: Mapping[str, Any] | None = None,
) -> neo4j.Driver:
    """Open a driver to ``target``; with ``verify``, fail now if it does not answer within
    ``connection_timeout`` seconds (TCP connect, Bolt handshake and authentication).
    ``options`` are more of the driver's settings (``max_transaction_retry_time``, ...)."""
    try:
        driver = neo4j.GraphDatabase.driver(
            target.uri, **_driver_options(target, connection_timeout, options)
        )
    except DriverError as exc:  # a URI the driver cannot use (e.g. a bolt:// query string)
        raise _unusable_uri(target, exc) from exc
    if verify:
        try:
            with _verify_options_allowed():
                driver.verify_connectivity(**_verify_options(connection_timeout))
        except (Neo4jError, DriverError, OSError) as exc:
            driver.close()
            raise _unavailable(target, exc) from exc
        except BaseException:  # interrupted while connecting: the driver is not handed out
            driver.close()
            raise
    return driver


async def open_async_driver(
    target: Neo4jTarget,
    *,
    verify: bool = True,
    connection_timeout: float = 15.0,
    options: Mapping[str, Any] | None = None,
) -> neo4j.AsyncDriver:
    """The async twin of :func:`open_driver`."""
    try:
        driver = neo4j.AsyncGraphDatabase.driver(
            target.uri, **_driver_options(target, connection_timeout, options)
        )
    except DriverError as exc:
        raise _unusable_uri(target, exc) from exc
    if verify:
        try:
            with _verify_options_allowed():
                await driver.verify_connectivity(**_verify_options(connection_timeout))
        except (Neo4jError, DriverError, OSError) as exc:
            await driver.close()
            raise _unavailable(target, exc) from exc
        except BaseException:  # cancelled while connecting: the driver is not handed out
            await driver.close()
            raise
    return driver


def wait_for_bolt(
    target: Neo4jTarget,
    *,
    timeout: float,
    still_starting: Callable[[], bool] = lambda: True,
    interval: float = 0.25,
) -> None:
    """Block until ``target`` accepts an authenticated Bolt connection.

    ``still_starting`` is polled between attempts; when it returns False (for example, the
    server process died) waiting stops early. A password the server refuses ends the wait at
    once: asking again would not change its answer, and each refusal counts towards locking
    the user out. A user locked out for a moment (after someone else's wrong passwords) is
    waited for: the lock ends a few seconds after the last wrong password, and asking while
    it lasts does not extend it. Raises :class:`Neo4jUnavailableError`.
    """
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        pause = interval
        try:
            with open_driver(target, connection_timeout=min(5.0, timeout)):
                return
        except Neo4jUnavailableError as exc:
            if credentials_refused(exc) and not rate_limited(exc):
                raise
            if rate_limited(exc):
                pause = max(interval, 1.0)
            last = exc
        if not still_starting() or time.monotonic() >= deadline:
            break
        time.sleep(pause)
    raise Neo4jUnavailableError(
        f"Neo4j at {target.describe()} did not accept Bolt connections within {timeout:.0f} s: "
        f"{last}"
    ) from last


#: What Neo4j answers, instead of checking the password, after a few wrong ones in a row.
_RATE_LIMITED = "Neo.ClientError.Security.AuthenticationRateLimit"


def rate_limited(exc: Neo4jUnavailableError) -> bool:
    """Whether connecting failed because the user is locked out for a moment after too many
    wrong passwords in a row (Neo4j then does not check the password at all)."""
    cause = exc.__cause__
    return isinstance(cause, Neo4jError) and cause.code == _RATE_LIMITED


def credentials_refused(exc: Neo4jUnavailableError) -> bool:
    """Whether connecting failed because the server refused the credentials (a wrong password,
    or too many wrong ones in a row)."""
    cause = exc.__cause__
    return isinstance(cause, AuthError) or (
        isinstance(cause, Neo4jError) and cause.code == _RATE_LIMITED
    )


def _unusable_uri(target: Neo4jTarget, exc: DriverError) -> ConfigurationError:
    setting = "GRAPHMEM_NEO4J_URI" if target.mode == "external" else "the managed server's URI"
    return ConfigurationError(f"{setting} {target.uri!r} cannot be used: {exc}")


def _unavailable(target: Neo4jTarget, exc: BaseException) -> Neo4jUnavailableError:
    hint = {
        "local": "start it with `graphmem neo4j start`",
        "docker": "start it with `graphmem neo4j start` (GRAPHMEM_NEO4J_URI=docker)",
        "external": "check GRAPHMEM_NEO4J_URI and that the server is up",
    }[target.mode]
    if isinstance(exc, AuthError) or (isinstance(exc, Neo4jError) and exc.code == _RATE_LIMITED):
        limited = (
            " (after too many wrong passwords in a row, it refuses every attempt for a while)"
            if not isinstance(exc, AuthError)
            else ""
        )
        return Neo4jUnavailableError(
            f"Neo4j at {target.describe()} refused the credentials of user {target.user!r}"
            + limited
            + (
                ""
                if target.mode == "external"
                else "; the generated password file may have "
                "been replaced: restart the server so it picks up the file again"
            )
        )
    if isinstance(exc, ServiceUnavailable | OSError):
        return Neo4jUnavailableError(f"no Neo4j answers at {target.describe()}: {hint}")
    return Neo4jUnavailableError(f"cannot use Neo4j at {target.describe()}: {exc}")
