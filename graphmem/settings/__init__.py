"""graphmem's settings: ``GRAPHMEM_`` variables, and a settings file only where
``GRAPHMEM_ENV_FILE`` names one.

:class:`GraphmemSettings` is all of them: the client's (:class:`ClientSettings`: which Neo4j,
the embedder, the namespace, recall) and how graphmem bootstraps a server of its own
(:class:`LocalServerSettings`: the local Neo4j's version, port, memory, Java and Maven; Docker).

Which Neo4j graphmem talks to is one setting, ``GRAPHMEM_NEO4J_URI``:

* ``local`` (the default): the local server graphmem builds from Neo4j's Community jars and
  manages with ``graphmem neo4j start|stop|status``; its generated password is read from a
  0600 file next to its data.
* ``docker``: the Neo4j 2026.09 Community container of ``docker/compose.yaml``, managed with the
  same commands through ``docker compose``.
* any ``bolt://``, ``bolt+s://``, ``neo4j://`` or ``neo4j+s://`` URI: an existing server,
  cluster or Aura instance, with ``GRAPHMEM_NEO4J_USER`` / ``GRAPHMEM_NEO4J_PASSWORD``.

With ``GRAPHMEM_SERVER_URL`` (and ``GRAPHMEM_API_KEY``), the CLI's memory commands and
:class:`~graphmem.remote.RemoteMemory` call a ``graphmem serve`` instead, which holds the Neo4j
settings itself.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError

from graphmem.errors import ConfigurationError
from graphmem.settings.client import ClientSettings
from graphmem.settings.common import (
    ENV_FILE_VARIABLE,
    MAX_WAIT_SECONDS,
    NEO4J_URI_SCHEMES,
    LocalNeo4jVersion,
    Neo4jMode,
    default_cache_dir,
    memory_bytes,
    memory_size,
    server_url,
)
from graphmem.settings.server import LocalServerSettings
from graphmem.settings.service import ServiceSettings


class GraphmemSettings(LocalServerSettings, ServiceSettings, ClientSettings):
    """All of graphmem's configuration: the client's settings and the local server's.
    Environment variables use the ``GRAPHMEM_`` prefix."""


def load_settings(**overrides: Any) -> GraphmemSettings:
    """Read the settings from the environment and the file ``GRAPHMEM_ENV_FILE`` names (no
    ``.env`` is read unless named), with ``overrides`` on top.

    A malformed setting raises :class:`ConfigurationError` naming the variable.
    """
    try:
        return GraphmemSettings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"GRAPHMEM_{'_'.join(str(p) for p in err['loc']).upper()}: "
            f"{err['msg'].removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        raise ConfigurationError(f"invalid graphmem settings: {problems}") from exc
    except (UnicodeDecodeError, OSError) as exc:  # the named file: not UTF-8, or unreadable
        named = os.environ.get(ENV_FILE_VARIABLE, "")
        raise ConfigurationError(
            f"cannot read graphmem settings from {ENV_FILE_VARIABLE}={named!r}: {exc}"
        ) from exc


__all__ = [
    "ENV_FILE_VARIABLE",
    "MAX_WAIT_SECONDS",
    "NEO4J_URI_SCHEMES",
    "ClientSettings",
    "GraphmemSettings",
    "LocalNeo4jVersion",
    "LocalServerSettings",
    "Neo4jMode",
    "ServiceSettings",
    "default_cache_dir",
    "load_settings",
    "memory_bytes",
    "memory_size",
    "server_url",
]
