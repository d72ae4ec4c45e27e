"""Text embeddings: the :class:`Embedder` protocol, the vectors it returns and their check,
and what the clients do with any embedder (load its model, type its errors).

graphmem's embedders are :class:`~graphmem.embed.onnx_embedder.OnnxEmbedder` and
:class:`~graphmem.embed.torch_embedder.SentenceTransformerEmbedder`; the graph records which
model made its vectors: see :mod:`graphmem.embed.identity`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from graphmem.errors import EmbeddingError, GraphmemError

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

    #: :func:`load_model` loads it: its :meth:`load` loads the wrapped embedder's model.
    graphmem_lazy = True

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def legacy_model_id(self) -> str | None:
        return getattr(self.inner, "legacy_model_id", None)

    def load(self) -> None:
        """Loads the wrapped embedder's model now, if it loads lazily."""
        load_model(self.inner)


def load_model(embedder: object) -> None:
    """Loads the model of graphmem's lazily loading embedders (those whose class sets
    ``graphmem_lazy``: the sentence-transformers embedder, the ONNX embedder, a wrapper of
    one). Other embedders are left alone: ``load`` is not part of the
    :class:`Embedder` protocol, and a method of that name may mean anything, so theirs load
    however and whenever they do."""
    if getattr(type(embedder), "graphmem_lazy", False):
        embedder.load()  # type: ignore[attr-defined]


@contextmanager
def embedder_errors(embedder: object) -> Iterator[None]:
    """An embedder's own errors as :class:`EmbeddingError` (graphmem's pass through): any
    object with ``embed`` may be the embedder, and what it raises must not leave the client
    untyped. Nothing has been written when it fails, since every write embeds first."""
    try:
        yield
    except GraphmemError:
        raise
    except Exception as exc:
        raise EmbeddingError(
            f"the embedder {getattr(embedder, 'model_id', type(embedder).__name__)!r} failed, "
            f"so nothing was written or searched: {type(exc).__name__}: {exc}"
        ) from exc


def check_vectors(vectors: npt.ArrayLike, dimension: int) -> Vectors:
    """Validate a batch of vectors: 2-d, the right width, finite, non-zero; return unit rows."""
    # float64 throughout, so that huge or tiny (but finite, non-zero) rows normalise exactly
    # instead of overflowing or underflowing float32 on the way.
    raw = np.asarray(vectors)
    if raw.dtype.kind not in "iuf":  # no booleans, strings or objects read as numbers
        raise EmbeddingError(f"vectors must hold numbers, got values of type {raw.dtype}")
    if raw.dtype == np.float32 and raw.ndim == 2 and raw.shape[1] == dimension and len(raw):
        # What an embedder returns (and what the clients check again) is usually float32 rows
        # of unit length already: one pass tells, without the float64 copy. A NaN, an infinity
        # or a float32 overflow or underflow of the squared norm fails it and takes the full
        # check below.
        squares = np.einsum("ij,ij->i", raw, raw)
        if bool((np.abs(squares - 1.0) <= 2e-3).all()):
            return raw
    array = raw.astype(np.float64, copy=False)
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
