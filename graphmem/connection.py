"""Where graphmem's Neo4j is and how to open a driver to it.

Driver errors met while connecting are mapped here to :class:`Neo4jUnavailableError`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable
from pydantic import SecretStr

from graphmem import __version__
from graphmem.errors import Neo4jUnavailableError

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


def _driver_options(target: Neo4jTarget, connection_timeout: float) -> dict[str, Any]:
    return {
        "auth": (target.user, target.password.get_secret_value()),
        "connection_timeout": connection_timeout,
        "user_agent": f"graphmem/{__version__}",
        # A fresh graph lacks the labels and properties that queries name; the server's
        # "does not exist" hints about that are noise, everything else is kept.
        "notifications_disabled_classifications": [
            neo4j.NotificationDisabledClassification.UNRECOGNIZED
        ],
    }


def open_driver(
    target: Neo4jTarget, *, verify: bool = True, connection_timeout: float = 15.0
) -> neo4j.Driver:
    """Open a driver to ``target``; with ``verify``, fail now if it does not answer."""
    driver = neo4j.GraphDatabase.driver(target.uri, **_driver_options(target, connection_timeout))
    if verify:
        try:
            driver.verify_connectivity()
        except (Neo4jError, DriverError, OSError) as exc:
            driver.close()
            raise _unavailable(target, exc) from exc
        except BaseException:  # interrupted while connecting: the driver is not handed out
            driver.close()
            raise
    return driver


async def open_async_driver(
    target: Neo4jTarget, *, verify: bool = True, connection_timeout: float = 15.0
) -> neo4j.AsyncDriver:
    """The async twin of :func:`open_driver`."""
    driver = neo4j.AsyncGraphDatabase.driver(
        target.uri, **_driver_options(target, connection_timeout)
    )
    if verify:
        try:
            await driver.verify_connectivity()
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
    server process died) waiting stops early. Raises :class:`Neo4jUnavailableError`.
    """
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            with open_driver(target, connection_timeout=min(5.0, timeout)):
                return
        except Neo4jUnavailableError as exc:
            last = exc
        if not still_starting() or time.monotonic() >= deadline:
            break
        time.sleep(interval)
    raise Neo4jUnavailableError(
        f"Neo4j at {target.describe()} did not accept Bolt connections within {timeout:.0f} s: "
        f"{last}"
    ) from last


def _unavailable(target: Neo4jTarget, exc: BaseException) -> Neo4jUnavailableError:
    hint = {
        "local": "start it with `graphmem neo4j start`",
        "docker": "start it with `graphmem neo4j start` (GRAPHMEM_NEO4J_URI=docker)",
        "external": "check GRAPHMEM_NEO4J_URI and that the server is up",
    }[target.mode]
    if isinstance(exc, AuthError):
        return Neo4jUnavailableError(
            f"Neo4j at {target.describe()} refused the credentials of user {target.user!r}"
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
