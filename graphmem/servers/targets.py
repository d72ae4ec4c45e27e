"""One setting, three kinds of Neo4j: pick the manager and the connection target for it."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from graphmem.errors import ConfigurationError
from graphmem.servers.connection import Neo4jTarget
from graphmem.servers.docker import DockerNeo4j
from graphmem.servers.local import LocalNeo4jServer
from graphmem.servers.state import ServerStatus, StartResult
from graphmem.settings import GraphmemSettings


class ManagedNeo4j(Protocol):
    """A Neo4j that graphmem starts and stops itself (local server or Docker)."""

    mode: str

    @property
    def password_file(self) -> Path: ...

    def start(self) -> StartResult: ...

    def stop(self, *, timeout: float = 90.0) -> bool: ...

    def status(self) -> ServerStatus: ...

    def target(self) -> Neo4jTarget: ...


def managed_server(settings: GraphmemSettings) -> ManagedNeo4j:
    """The manager for ``GRAPHMEM_NEO4J_URI=local`` or ``docker``."""
    if settings.neo4j_mode == "local":
        return LocalNeo4jServer(settings)
    if settings.neo4j_mode == "docker":
        return DockerNeo4j(settings)
    raise ConfigurationError(
        f"GRAPHMEM_NEO4J_URI={settings.neo4j_uri} names an external server, which graphmem "
        "does not start or stop; use 'local' or 'docker' for a managed one"
    )


def resolve_target(settings: GraphmemSettings) -> Neo4jTarget:
    """Where to connect, with which credentials, for the configured Neo4j."""
    if settings.neo4j_mode != "external":
        return managed_server(settings).target()
    if settings.neo4j_password is None:
        raise ConfigurationError(
            f"GRAPHMEM_NEO4J_URI={settings.neo4j_uri} needs GRAPHMEM_NEO4J_PASSWORD"
        )
    return Neo4jTarget(
        uri=settings.neo4j_uri,
        user=settings.neo4j_user,
        password=settings.neo4j_password,
        database=settings.neo4j_database,
        mode="external",
    )
