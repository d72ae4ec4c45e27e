"""Test helpers: a deterministic fake embedder, ports, a database wipe for disposable DBs, and
the settings that point the command line at the test graph."""

from __future__ import annotations

import hashlib
import http.server
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import neo4j
import numpy as np

from graphmem.core.extraction import ExtractedFact
from graphmem.embed.embedder import Vectors, check_vectors
from graphmem.models import Episode

if TYPE_CHECKING:
    from graphmem.client.graph import Graph


class SentenceExtractor:
    """An extractor without an LLM: each sentence of a message as a fact derived from it."""

    name = "sentences"

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        return [
            ExtractedFact(text=part.strip() + ".", episode_ids=(e.id,))
            for e in episodes
            for part in e.content.split(".")
            if part.strip()
        ]


class FakeEmbedder:
    """Hash-seeded unit vectors: equal texts get equal vectors, different texts differ."""

    def __init__(self, dimension: int = 384, model_id: str = "fake/hash-embedder") -> None:
        self.dimension = dimension
        self.model_id = model_id

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows.append(np.random.default_rng(seed).standard_normal(self.dimension))
        return check_vectors(
            np.array(rows, dtype=np.float32).reshape(-1, self.dimension), self.dimension
        )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wipe_database(driver: neo4j.Driver, database: str) -> None:
    """Delete every node and drop every index and constraint (disposable databases only)."""
    with driver.session(database=database) as session:
        for record in list(session.run("SHOW CONSTRAINTS YIELD name RETURN name")):
            session.run(f"DROP CONSTRAINT `{record['name']}` IF EXISTS").consume()
        for record in list(
            session.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")
        ):
            session.run(f"DROP INDEX `{record['name']}` IF EXISTS").consume()
        session.run(
            "MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
        ).consume()


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on ``port`` (Linux /proc/net)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, state = fields[1], fields[3]
            host_hex, port_hex = address.split(":")
            if state != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                continue
            found.add(_decode_host(host_hex))
    return found


def _decode_host(host_hex: str) -> str:
    raw = bytes.fromhex(host_hex)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def cli_env(graph: Graph, ns: str | None = None) -> dict[str, str]:
    """The settings that point the command line at the test graph (and namespace ``ns``)."""
    env = {
        "GRAPHMEM_NEO4J_URI": graph.target.uri,
        "GRAPHMEM_NEO4J_USER": graph.target.user,
        "GRAPHMEM_NEO4J_PASSWORD": graph.target.password.get_secret_value(),
        "GRAPHMEM_NEO4J_DATABASE": graph.database,
    }
    if ns is not None:
        env["GRAPHMEM_NAMESPACE"] = ns
    return env


class RecordingHTTPHandler(http.server.BaseHTTPRequestHandler):
    """A local HTTP listener's handler that records every path asked for (in ``hits``), to
    show that a query reached, or did not reach, the network."""

    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"a,b\n")

    def log_message(self, *args: object) -> None:
        pass
