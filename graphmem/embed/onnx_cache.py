"""The cache of built ONNX graphs: a graph file per model, builder version and precision under
``<cache_dir>/onnx``, with a manifest that records its SHA-256; built once under a file lock
and written atomically, read again only while its content matches the manifest."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem._json import json_file
from graphmem.embed.onnx_build import BUILDER_VERSION, BertPlan, Precision, build_graph
from graphmem.errors import EmbeddingError


@dataclass(frozen=True)
class BuiltGraph:
    """An ONNX graph in the cache: its file, its SHA-256, and how long making it took
    (0 when it was already there)."""

    path: Path
    sha256: str
    build_seconds: float


def cached_graph(
    plan: BertPlan, source_digest: str, precision: Precision, cache_dir: Path
) -> BuiltGraph:
    """The ONNX graph of the model whose files have ``source_digest``, in ``precision``: read
    from ``<cache_dir>/onnx`` when a graph is there whose content still has the SHA-256 its
    manifest recorded, otherwise built (under a file lock, so that processes starting together
    build it once) and written there atomically with its manifest."""
    folder = cache_dir.expanduser() / "onnx"
    stem = f"{source_digest[:16]}-b{BUILDER_VERSION}-{precision}"
    graph, manifest = folder / f"{stem}.onnx", folder / f"{stem}.json"
    found = _verified(graph, manifest)
    if found is not None:
        return BuiltGraph(graph, found, 0.0)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbeddingError(f"cannot create the ONNX cache {folder}: {exc}") from exc
    with _locked(folder / f"{stem}.lock"):
        found = _verified(graph, manifest)  # another process may have built it meanwhile
        if found is not None:
            return BuiltGraph(graph, found, 0.0)
        began = time.perf_counter()
        data = _serialised(plan, precision)
        digest = hashlib.sha256(data).hexdigest()
        seconds = time.perf_counter() - began
        record = {
            "source_sha256": source_digest,
            "precision": precision,
            "builder": BUILDER_VERSION,
            "sha256": digest,
            "size": len(data),
            "build_seconds": round(seconds, 3),
        }
        try:
            _write_atomically(graph, data)
            _write_atomically(manifest, json.dumps(record, indent=1).encode())
        except OSError as exc:
            raise EmbeddingError(f"cannot write the ONNX graph into {folder}: {exc}") from exc
        return BuiltGraph(graph, digest, seconds)


def _serialised(plan: BertPlan, precision: Precision) -> bytes:
    """The graph's bytes in ``precision``."""
    return bytes(build_graph(plan, precision).SerializeToString())


def _verified(graph: Path, manifest: Path) -> str | None:
    """The graph's SHA-256 when the file is there and matches its manifest; None otherwise."""
    record = _manifest(manifest)
    if record is None or not graph.is_file():
        return None
    try:
        with graph.open("rb") as stream:
            digest = hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError:
        return None
    return digest if digest == record.get("sha256") else None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_atomically(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _manifest(path: Path) -> dict[str, Any] | None:
    """A graph's manifest, or None when it cannot be read."""
    record = json_file(path)
    return record if isinstance(record, dict) else None
