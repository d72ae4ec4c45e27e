"""The embedding backends of one model side by side: torch (sentence-transformers), ONNX in
float32 and ONNX in int8, each through its own embedder on the same texts and batches, one
after the other, with the cosine of each ONNX vector to torch's vector of the same text."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphmem.testing import Progress, chosen_backend, embedder_from_settings
from graphmem_bench.bench.report import BackendCeiling, BackendComparison
from graphmem_bench.bench.timing import embed_ceiling

if TYPE_CHECKING:
    from graphmem import GraphmemSettings
    from graphmem.testing import Vectors

#: The backends compared, in the order they run.
_RUNS = (("torch", None), ("onnx", "fp32"), ("onnx", "int8"))


def compare_backends(
    settings: GraphmemSettings,
    texts: Sequence[str],
    batch_size: int,
    say: Progress,
    *,
    pid: int | None = None,
) -> BackendComparison | None:
    """The ceilings of the settings' model on each backend, or None when the ONNX backend
    cannot serve that model (there is nothing to compare then)."""
    base = settings.model_copy(update={"embedding_backend": "onnx"})
    if chosen_backend(settings.model_copy(update={"embedding_backend": "auto"})) != "onnx":
        say("backend comparison skipped: the ONNX backend cannot serve this model")
        return None
    skipped = None
    if importlib.util.find_spec("sentence_transformers") is None:
        skipped = (
            "sentence-transformers is not installed "
            "(pip install '<graphmem checkout or wheel>[torch]')"
        )
    results: list[BackendCeiling] = []
    reference: Vectors | None = None
    for backend, precision in _RUNS:
        if backend == "torch" and skipped:
            continue
        run_settings = base.model_copy(
            update={"embedding_backend": backend, "embedding_precision": precision}
        )
        embedder = embedder_from_settings(run_settings)
        label = f"{backend} {precision or 'fp32'}"
        say(f"embedding backends: {label} on {len(texts):,} texts")
        ceiling, vectors = embed_ceiling(embedder, texts, batch_size, say, pid=pid)
        mean = least = None
        if reference is None and backend == "torch":
            reference = vectors
        elif reference is not None:
            cosines = np.einsum("ij,ij->i", vectors, reference)
            mean, least = float(cosines.mean()), float(cosines.min())
        results.append(
            BackendCeiling(
                backend=backend,
                precision=precision or "fp32",
                model_id=embedder.model_id,
                ceiling=ceiling,
                cosine_mean=mean,
                cosine_min=least,
            )
        )
        del embedder  # one model in memory at a time
    return BackendComparison(texts=len(texts), backends=results, skipped=skipped)


__all__ = ["compare_backends"]
