"""The embedder a run uses: the one it was given, or the one the settings name.

``GRAPHMEM_EMBEDDING_BACKEND`` picks what runs the model: ``onnx`` (ONNX Runtime, see
:mod:`graphmem.embed.onnx_embedder`), ``torch`` (sentence-transformers, which imports PyTorch)
or ``auto`` (the default): ONNX for a BERT sentence-transformers model in a local directory
(the packaged default among them) on the CPU, sentence-transformers for anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from graphmem.errors import ConfigurationError

if TYPE_CHECKING:
    from graphmem.embed.embedder import Embedder
    from graphmem.settings import GraphmemSettings


def chosen_backend(settings: GraphmemSettings) -> str:
    """``"onnx"`` or ``"torch"``: the backend the settings give, ``auto`` decided."""
    backend = settings.embedding_backend
    if backend != "auto":
        return backend
    if settings.embedding_device != "cpu":
        return "torch"
    model = settings.embedding_model
    if model is None:  # the packaged all-MiniLM-L6-v2, a BERT model ONNX serves
        return "onnx"
    from graphmem.embed.onnx_build import onnx_plan

    directory = Path(model).expanduser()
    return "onnx" if directory.is_dir() and not isinstance(onnx_plan(directory), str) else "torch"


def embedder_from_settings(settings: GraphmemSettings, *, lazy: bool = False) -> Embedder:
    """The embedder the settings name; with ``lazy`` its model loads on first use."""
    backend = chosen_backend(settings)
    if backend == "onnx":
        if settings.embedding_device != "cpu":
            raise ConfigurationError(
                f"GRAPHMEM_EMBEDDING_DEVICE={settings.embedding_device} needs the torch "
                "backend: the ONNX backend runs on the CPU"
            )
        from graphmem.embed.onnx_embedder import DEFAULT_BATCH_SIZE, OnnxEmbedder

        return OnnxEmbedder(
            settings.embedding_model,
            model_id=settings.embedding_model_id,
            precision=settings.embedding_precision or "int8",
            batch_size=settings.embedding_batch_size or DEFAULT_BATCH_SIZE,
            lazy=lazy,
            cache_dir=settings.cache_dir,
        )
    if settings.embedding_precision == "int8":
        raise ConfigurationError(
            "GRAPHMEM_EMBEDDING_PRECISION=int8 needs the ONNX backend; the torch backend "
            "runs the model's own float weights"
        )
    from graphmem.embed.torch_embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.from_settings(settings, lazy=lazy)


def load_embedder(
    settings: GraphmemSettings, embedder: Embedder | None, say: Callable[[str], None]
) -> Embedder:
    """``embedder``, or the one the settings name, loaded now (it may take a while)."""
    if embedder is not None:
        return embedder
    say(f"loading the embedder ({settings.embedding_model or 'default model'})")
    return embedder_from_settings(settings)


__all__ = ["chosen_backend", "embedder_from_settings", "load_embedder"]
