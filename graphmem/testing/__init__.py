"""What tests and measuring runs of graphmem (and of an application built on it) use beside
the public API of :mod:`graphmem`: throwaway Neo4j servers, the graph read and written by
query name, the embedder, and a local OpenAI-compatible server that replays scripted LLM
answers (:mod:`graphmem.testing.llm_stub`). It is the front door of ``graphmem bench`` and
``graphmem eval`` (tools/graphmem-bench), which import nothing else of graphmem but
:mod:`graphmem`, :mod:`graphmem.models` and :mod:`graphmem.cli.plugins`.

- **Neo4j for a run**: :class:`ServerOptions` (a throwaway local server, of a
  :data:`LocalNeo4jVersion`, or the configured one), :func:`run_server` and :func:`on_server`
  (that Neo4j for a block, or for a function),
  :func:`scratch_neo4j` (a local server in a temporary home, deleted afterwards),
  :class:`Neo4jTarget`, and :func:`settle` / :func:`scratch_server_pid` / :func:`cpu_reader`
  (waiting until a throwaway server is idle between timed phases).
- **The graph by name**: :func:`run_query`, :func:`stream_query`, :func:`server_version`
  (headed ``.cypher`` files of ``graphmem/store/queries/``) on a client or its
  :class:`Graph`, and what a bare baseline write
  stores as graphmem does: :func:`text_hash`, :class:`VectorParam`, :data:`API_ACTOR`.
- **Embedding**: the :class:`Embedder` protocol, :data:`Vectors`, :class:`EmbedderWrapper`,
  :func:`load_embedder`, :func:`embedder_from_settings` and :func:`chosen_backend`.
- **LLMs**: :class:`LLM` and :class:`LLMProposer` (the configured model as consolidation's
  proposer), :func:`import_graphiti`, and :mod:`graphmem.testing.llm_stub`, a local
  OpenAI-compatible server that replays scripted answers, so that the LLM paths run through
  the real clients with no network and no key.
- **Recall's score**: :class:`Calibration` (the logistic model a hit's score is), its
  :data:`CALIBRATION_FEATURES` and :func:`calibration_path` (the shipped fit, which
  ``graphmem eval fit`` replaces).
- **Where a call's database time goes**: :func:`statement_times` (every statement and
  transaction the clients run inside it, timed by the client and by the server) and
  :class:`StatementTime`.
- **Recall and messages as the clients see them**: :func:`settings_recall_config`,
  :func:`episode_text`, and :func:`json_objects` (the JSON-lines reader of ``graphmem
  ingest``).
"""

from __future__ import annotations

from graphmem._json import json_objects
from graphmem.client.base import StatementTime, settings_recall_config, statement_times
from graphmem.client.graph import Graph
from graphmem.core.actor import API_ACTOR
from graphmem.core.messages import episode_text
from graphmem.core.plans import VectorParam
from graphmem.core.recall.calibration import FEATURES as CALIBRATION_FEATURES
from graphmem.core.recall.calibration import Calibration
from graphmem.core.recall.calibration import shipped_path as calibration_path
from graphmem.core.writes import text_hash
from graphmem.embed.embedder import Embedder, EmbedderWrapper, Vectors
from graphmem.embed.loading import chosen_backend, embedder_from_settings, load_embedder
from graphmem.llm.client import LLM
from graphmem.llm.graphiti import import_graphiti
from graphmem.llm.roles import LLMProposer
from graphmem.servers.connection import Neo4jTarget
from graphmem.servers.scratch import (
    Progress,
    ServerMode,
    ServerOptions,
    cpu_reader,
    on_server,
    run_server,
    scratch_neo4j,
    scratch_server_pid,
    settle,
)
from graphmem.settings import LocalNeo4jVersion
from graphmem.testing.graph import run_query, server_version, stream_query

__all__ = [
    "API_ACTOR",
    "CALIBRATION_FEATURES",
    "LLM",
    "Calibration",
    "Embedder",
    "EmbedderWrapper",
    "Graph",
    "LLMProposer",
    "LocalNeo4jVersion",
    "Neo4jTarget",
    "Progress",
    "ServerMode",
    "ServerOptions",
    "StatementTime",
    "VectorParam",
    "Vectors",
    "calibration_path",
    "chosen_backend",
    "cpu_reader",
    "embedder_from_settings",
    "episode_text",
    "import_graphiti",
    "json_objects",
    "load_embedder",
    "on_server",
    "run_query",
    "run_server",
    "scratch_neo4j",
    "scratch_server_pid",
    "server_version",
    "settings_recall_config",
    "settle",
    "statement_times",
    "stream_query",
    "text_hash",
]
