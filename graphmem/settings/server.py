"""The settings of the servers graphmem runs itself: the local Neo4j it builds with Maven
(``GRAPHMEM_LOCAL_NEO4J_*``, Java, Maven) and the Docker one (``GRAPHMEM_DOCKER_*``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from graphmem.settings.common import (
    LocalNeo4jVersion,
    SettingsBase,
    memory_bytes,
    memory_size,
    seconds,
)


class LocalServerSettings(SettingsBase):
    """How graphmem bootstraps a Neo4j of its own (``GRAPHMEM_NEO4J_URI=local`` or ``docker``)."""

    # --- the local server (GRAPHMEM_NEO4J_URI=local) --------------------------------------
    local_neo4j_home: Path | None = Field(
        None, description="Data, logs and password of the local server; default DATA_DIR/neo4j."
    )
    local_neo4j_port: int = Field(7687, ge=1, le=65535, description="Bolt port on 127.0.0.1.")
    local_neo4j_heap: str = Field("1g", description="Java heap of the local server.")
    local_neo4j_pagecache: str = Field("512m", description="Neo4j page cache size.")
    local_neo4j_start_timeout: float = seconds(300.0, "Seconds to wait for the server to start.")
    local_neo4j_version: LocalNeo4jVersion = Field(
        "2026.09.0",
        description="2026.09.0 (Java 21+; the newest Java found is used, 25 where installed) "
        "or 5.26.30 (the LTS, Java 17+).",
    )
    local_neo4j_vector_merge_factor: int = Field(
        10,
        ge=2,
        le=1000,
        description=(
            "Segments Lucene merges at once in the vector indexes (Neo4j's own default is 50): "
            "fewer segments make vector search faster, for more merging after writes."
        ),
    )
    local_neo4j_tx_log_size: str = Field(
        "1m",
        description="Size at which the local server's transaction log rotates (at least 128k); "
        "erased words leave the log at the first checkpoint after their log file rotates (and "
        "the store once later writes reuse their freed records).",
    )
    local_neo4j_checkpoint_seconds: int = Field(
        60,
        ge=1,
        le=86_400,
        description="Seconds between the local server's checkpoints, which prune rotated logs.",
    )
    local_neo4j_transaction_memory: str | None = Field(
        None,
        description="Most heap one transaction may use on the local server (a query over it "
        "stops with an error); default: a quarter of the heap.",
    )
    local_neo4j_project: Path | None = Field(
        None, description="The Maven project to build; default: the one shipped with graphmem."
    )
    java: str = Field(
        "java",
        description="The Java the local server runs on. Left at 'java', a JDK in JAVA_HOME or "
        "/usr/lib/jvm is used when the one on PATH is older than the Neo4j version needs.",
    )
    maven: str = Field("mvn", description="The Maven that builds the local server.")

    # --- Docker (GRAPHMEM_NEO4J_URI=docker) -----------------------------------------------
    docker_compose_file: Path | None = Field(
        None, description="The compose file; default: the one shipped with graphmem."
    )
    docker_project: str = Field("graphmem", description="The compose project name.")
    docker_port: int = Field(7687, ge=1, le=65535, description="Bolt port of the container.")

    @field_validator("local_neo4j_heap", "local_neo4j_pagecache")
    @classmethod
    def _check_size(cls, value: str) -> str:
        return memory_size(value)

    @field_validator("local_neo4j_tx_log_size")
    @classmethod
    def _check_log_size(cls, value: str) -> str:
        size = memory_size(value)
        if memory_bytes(size) < 128 * 1024:
            raise ValueError(f"must be at least 128k (Neo4j's least rotation size); got {value!r}")
        return size

    @field_validator("local_neo4j_transaction_memory")
    @classmethod
    def _check_transaction_memory(cls, value: str | None) -> str | None:
        return None if value is None else memory_size(value)

    @property
    def local_transaction_memory(self) -> str:
        """The local server's per-transaction memory limit: the setting, or a quarter of the
        heap."""
        if self.local_neo4j_transaction_memory is not None:
            return self.local_neo4j_transaction_memory
        return f"{max(memory_bytes(self.local_neo4j_heap) // 4 // 2**20, 64)}m"

    @property
    def local_home(self) -> Path:
        return (self.local_neo4j_home or self.data_dir / "neo4j").expanduser().resolve()
