"""An :class:`~graphmem.embed.embedder.Embedder` on ONNX Runtime: a BERT sentence-transformers
model (the packaged all-MiniLM-L6-v2 by default) run as an ONNX graph that graphmem builds
from the model's own weights once (:mod:`graphmem.embed.onnx_build`) and caches
(:mod:`graphmem.embed.onnx_cache`), tokenised by ``tokenizers``. Nothing here imports PyTorch.

In ``fp32`` the vectors are those of the sentence-transformers backend (cosine 1.0 to six
places), so the graph records the same model identity. ``int8`` (the default) quantises the
matrix products (weights per output channel, activations per token) for two to three times
torch's speed; its vectors differ slightly (mean cosine to the float vectors about 0.997), so
it records its own identity, ``<model id>@int8``, and a graph moves between the two with
``graphmem reembed``. In both, a text's vector does not depend on the texts batched with it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.embed.embedder import Vectors, check_vectors
from graphmem.embed.identity import (
    DEFAULT_MODEL_ID,
    model_digest,
    model_id_for,
    packaged_model_path,
)
from graphmem.embed.onnx_build import BertPlan, Precision, onnx_plan
from graphmem.embed.onnx_cache import cached_graph
from graphmem.errors import EmbeddingError

#: Texts per ONNX Runtime call unless the settings say otherwise: short texts run fastest in
#: batches of about this size on a CPU.
DEFAULT_BATCH_SIZE = 32


def onnx_model_id(base: str, precision: Precision) -> str:
    """The identity the graph records for vectors of ``base`` made in ``precision``: int8
    vectors differ from the model's own, so their identity says so (once)."""
    if precision == "fp32" or base.endswith("@int8"):
        return base
    return f"{base}@int8"


class OnnxEmbedder:
    """The model in ``model`` (default: the packaged all-MiniLM-L6-v2) on ONNX Runtime.

    With ``lazy=True`` nothing heavy happens until the first :meth:`embed` (or :meth:`load`):
    the graph is then read from the cache, or built and cached, and ONNX Runtime starts.
    A model the ONNX path cannot serve is an :class:`EmbeddingError` at construction, saying
    why (:func:`~graphmem.embed.onnx_build.onnx_plan`).
    """

    backend = "onnx"
    #: :func:`~graphmem.embed.embedder.load_model` loads it (its model loads on first use when
    #: ``lazy``).
    graphmem_lazy = True

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        model_id: str | None = None,
        precision: Precision = "int8",
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
        lazy: bool = False,
        cache_dir: str | Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise EmbeddingError("batch_size must be at least 1")
        if precision not in ("int8", "fp32"):
            raise EmbeddingError(f"precision must be 'int8' or 'fp32', not {precision!r}")
        directory = packaged_model_path() if model is None else Path(model).expanduser()
        plan = onnx_plan(directory)
        if isinstance(plan, str):
            raise EmbeddingError(
                f"the ONNX backend cannot run the model {str(directory)!r}: {plan}"
            )
        from graphmem.settings import default_cache_dir

        self._cache_dir = default_cache_dir() if cache_dir is None else Path(cache_dir)
        base = DEFAULT_MODEL_ID if model is None else model_id_for(directory, cache_dir=cache_dir)
        # An explicit identity names the model; int8 vectors still get their own, so they
        # never enter a graph of the model's float vectors.
        self._model_id = onnx_model_id(model_id or base, precision)
        self._directory = directory
        self._plan: BertPlan = plan
        self._precision: Precision = precision
        self._batch_size = batch_size
        self._threads = threads
        self._load_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        #: Seconds the first load spent building the graph (0 when it came from the cache).
        self.build_seconds: float | None = None
        if not lazy:
            self.load()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._plan.hidden

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def precision(self) -> Precision:
        return self._precision

    @property
    def loaded(self) -> bool:
        return self._session is not None

    @property
    def legacy_model_id(self) -> str | None:
        return None

    def load(self) -> None:
        """Read (or build) the graph and start ONNX Runtime, once; threads racing to the first
        embed share one load."""
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is None:
                self._tokenizer = self._make_tokenizer()
                self._session = self._make_session()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.intp, count=len(texts))
        # Similar lengths share a batch, so that little of each batch is padding.
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            rows = order[start : start + self._batch_size]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                tokens = encodings[index].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            try:
                (vectors,) = self._session.run(
                    ["sentence_embedding"], {"input_ids": ids, "attention_mask": mask}
                )
            except Exception as exc:  # onnxruntime raises its own exception types
                raise EmbeddingError(f"ONNX Runtime failed to embed a batch: {exc}") from exc
            out[rows] = vectors
        return check_vectors(out, self.dimension)

    # --- loading ----------------------------------------------------------------------------
    def _make_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        path = self._directory / "tokenizer.json"
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises its own exception types
            raise EmbeddingError(f"cannot load the tokenizer {path}: {exc}") from exc
        # As sentence-transformers does: cut at the model's max_seq_length, pad per batch.
        tokenizer.enable_truncation(max_length=self._plan.max_seq_length)
        tokenizer.no_padding()
        return tokenizer

    def _make_session(self) -> Any:
        try:
            import onnxruntime
        except ImportError as exc:
            raise EmbeddingError(
                "the ONNX embedder needs the onnxruntime package (pip install onnxruntime)"
            ) from exc
        digest = model_digest(self._directory, cache_dir=self._cache_dir)
        try:
            built = cached_graph(self._plan, digest, self._precision, self._cache_dir)
        except EmbeddingError:
            raise
        except Exception as exc:  # onnx and the quantiser raise many types
            raise EmbeddingError(
                f"cannot build the ONNX graph of {str(self._directory)!r}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        self.build_seconds = built.build_seconds
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = self._threads or _usable_cpus()
        options.inter_op_num_threads = 1
        # Idle threads sleep instead of spinning, so that they leave the CPU to Neo4j and to
        # the rest of the process between batches.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        try:
            return onnxruntime.InferenceSession(
                str(built.path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbeddingError(f"ONNX Runtime cannot load {built.path}: {exc}") from exc


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
