"""The ONNX backend: its vectors against sentence-transformers' (PyTorch) on a fixed text set,
the graph cache, the models it serves and refuses, and how the settings choose a backend."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from graphmem.embed.embedder import Embedder
from graphmem.embed.identity import (
    DEFAULT_MODEL_ID,
    packaged_model_path,
    precision_mismatch_hint,
)
from graphmem.embed.loading import chosen_backend, embedder_from_settings
from graphmem.embed.onnx_build import BertPlan, Precision, onnx_plan, read_safetensors
from graphmem.embed.onnx_embedder import OnnxEmbedder
from graphmem.embed.torch_embedder import SentenceTransformerEmbedder
from graphmem.errors import ConfigurationError, EmbedderMismatchError, EmbeddingError
from graphmem.settings import load_settings
from graphmem.store.indexes import check_embedder

#: Short facts, questions, a text longer than the model's 256 tokens (truncated alike), text
#: in other scripts, emoji, markup, numbers, an empty and a blank text.
TEXTS = [
    "The user works at Google.",
    "The user works at Microsoft.",
    "Where does the user work?",
    "My sister lives in Lisbon and visits every summer.",
    "I run 5 km three times a week, usually before breakfast.",
    "The meeting moved from Tuesday 3pm to Thursday 10am.",
    "Allergic to peanuts; carries an EpiPen.",
    "what does the user drink",
    "Prefers green tea over coffee in the afternoon.",
    "Her flight AF1234 lands at CDG at 07:45 on 2026-03-01.",
    "The API key rotation policy is every 90 days.",
    "Ünïcödé résumé naïve café façade",
    "日本語のテキストも埋め込めます。",
    "Привет, как дела? Всё хорошо.",
    "🎉🎉 party at 8 🍕🍺",
    "<b>bold</b> and `code` and [a link](https://example.com/x?y=1)",
    "3.14159 2.71828 1.41421 0 -1 1e10",
    " ".join(["long"] * 50 + ["context about the project deadline and the budget"] * 40),
    "",
    "   ",
]


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    """sentence-transformers' own vectors of the fixed texts (the reference)."""
    return SentenceTransformerEmbedder(batch_size=8).embed(TEXTS)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


def test_fp32_onnx_makes_the_torch_vectors(torch_vectors: np.ndarray, cache: Path) -> None:
    onnx = OnnxEmbedder(precision="fp32", cache_dir=cache)
    vectors = onnx.embed(TEXTS)
    cosines = (vectors * torch_vectors).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines
    assert onnx.model_id == DEFAULT_MODEL_ID  # the same vectors, the same identity


def test_int8_onnx_agrees_with_torch_within_the_quality_bar(
    torch_vectors: np.ndarray, cache: Path
) -> None:
    onnx = OnnxEmbedder(cache_dir=cache)
    vectors = onnx.embed(TEXTS)
    cosines = (vectors * torch_vectors).sum(axis=1)
    assert cosines.mean() >= 0.99 and cosines.min() >= 0.97, cosines
    assert onnx.model_id == f"{DEFAULT_MODEL_ID}@int8"  # not the float vectors: its own id
    # Rankings hold: the question is nearer its answer than to an unrelated fact.
    question, google, lisbon = vectors[2], vectors[0], vectors[3]
    assert question @ google > question @ lisbon


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_text_gets_the_same_vector_whatever_it_is_batched_with(
    cache: Path, precision: Precision
) -> None:
    """int8 too: activations are scaled per token, never per batch, so neither the batch's
    other texts nor its padding move a vector."""
    small = OnnxEmbedder(precision=precision, batch_size=3, cache_dir=cache)
    whole = OnnxEmbedder(precision=precision, batch_size=64, cache_dir=cache)
    a = small.embed(TEXTS)
    b = whole.embed(TEXTS[::-1])[::-1]
    alone = np.vstack([whole.embed([text]) for text in TEXTS])
    assert np.abs(a - b).max() < 1e-4 and np.abs(a - alone).max() < 1e-4
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-3)


def test_the_graph_is_built_once_and_cached_with_its_digest(tmp_path: Path) -> None:
    first = OnnxEmbedder(cache_dir=tmp_path)
    assert first.build_seconds is not None and first.build_seconds > 0
    (manifest,) = (tmp_path / "onnx").glob("*.json")
    record = json.loads(manifest.read_text())
    graph = manifest.with_suffix(".onnx")
    assert record["precision"] == "int8" and record["size"] == graph.stat().st_size
    again = OnnxEmbedder(cache_dir=tmp_path)
    assert again.build_seconds == 0.0
    # A damaged file no longer has its recorded digest: it is built again, not used.
    graph.write_bytes(b"not a graph")
    rebuilt = OnnxEmbedder(cache_dir=tmp_path)
    assert rebuilt.build_seconds is not None and rebuilt.build_seconds > 0
    assert rebuilt.embed(["x"]).shape == (1, 384)


def test_a_lazy_onnx_embedder_loads_on_first_embed(tmp_path: Path) -> None:
    lazy = OnnxEmbedder(lazy=True, cache_dir=tmp_path)
    assert (lazy.loaded, lazy.dimension) == (False, 384)
    assert not (tmp_path / "onnx").exists()  # nothing built yet
    assert lazy.embed([]).shape == (0, 384) and not lazy.loaded
    assert lazy.embed(["hello"]).shape == (1, 384) and lazy.loaded
    assert isinstance(lazy, Embedder)
    with pytest.raises(TypeError):
        lazy.embed("one string")


def _model_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "model"
    shutil.copytree(packaged_model_path(), copy)
    return copy


def test_models_the_onnx_path_cannot_serve_say_why(tmp_path: Path) -> None:
    model = _model_copy(tmp_path)
    assert isinstance(onnx_plan(model), BertPlan)
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    assert "model type is 'roberta'" in str(onnx_plan(model))
    (model / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    assert "activation" in str(onnx_plan(model))
    (model / "config.json").write_text(json.dumps(config))
    (model / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "max"}))
    assert "pooling" in str(onnx_plan(model))
    with pytest.raises(EmbeddingError, match="ONNX backend cannot run"):
        OnnxEmbedder(model, cache_dir=tmp_path)
    assert "not a local sentence-transformers" in str(onnx_plan(tmp_path / "nothing"))


def test_a_local_bert_model_gets_its_own_identity(tmp_path: Path) -> None:
    model = _model_copy(tmp_path)
    fp32 = OnnxEmbedder(model, precision="fp32", lazy=True, cache_dir=tmp_path)
    int8 = OnnxEmbedder(model, lazy=True, cache_dir=tmp_path)
    assert fp32.model_id.startswith("model@sha256:")
    assert int8.model_id == f"{fp32.model_id}@int8"
    # An explicit identity is kept for float vectors; int8 vectors never take it unmarked.
    mine = {"model_id": "mine", "lazy": True, "cache_dir": tmp_path}
    assert OnnxEmbedder(model, precision="fp32", **mine).model_id == "mine"  # type: ignore[arg-type]
    assert OnnxEmbedder(model, **mine).model_id == "mine@int8"  # type: ignore[arg-type]
    marked = {"model_id": "mine@int8", "lazy": True, "cache_dir": tmp_path}
    assert OnnxEmbedder(model, **marked).model_id == "mine@int8"  # type: ignore[arg-type]


def test_safetensors_are_read_without_torch(tmp_path: Path) -> None:
    tensors = read_safetensors(packaged_model_path() / "model.safetensors")
    assert tensors["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert tensors["embeddings.word_embeddings.weight"].dtype == np.float32
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(b"\x05")
    with pytest.raises(EmbeddingError, match="cannot read the model weights"):
        read_safetensors(broken)


def test_the_settings_choose_the_backend(tmp_path: Path) -> None:
    default = load_settings(cache_dir=tmp_path)
    assert chosen_backend(default) == "onnx"
    made = embedder_from_settings(default, lazy=True)
    assert isinstance(made, OnnxEmbedder) and made.precision == "int8"
    fp32 = embedder_from_settings(load_settings(embedding_precision="fp32"), lazy=True)
    assert fp32.model_id == DEFAULT_MODEL_ID
    torch = embedder_from_settings(load_settings(embedding_backend="torch"), lazy=True)
    assert isinstance(torch, SentenceTransformerEmbedder) and torch.model_id == DEFAULT_MODEL_ID
    # A hub name or a GPU: only sentence-transformers can serve it.
    assert chosen_backend(load_settings(embedding_model="org/some-model")) == "torch"
    assert chosen_backend(load_settings(embedding_device="cuda")) == "torch"
    with pytest.raises(ConfigurationError, match="needs the ONNX backend"):
        embedder_from_settings(
            load_settings(embedding_backend="torch", embedding_precision="int8"), lazy=True
        )
    with pytest.raises(ConfigurationError, match="needs the torch backend"):
        embedder_from_settings(
            load_settings(embedding_backend="onnx", embedding_device="cuda"), lazy=True
        )


def test_a_graph_of_the_other_precision_is_refused_with_the_way_out() -> None:
    int8 = OnnxEmbedder(lazy=True)
    state = {"embedder_model": DEFAULT_MODEL_ID, "embedding_dimension": 384}
    with pytest.raises(EmbedderMismatchError, match="GRAPHMEM_EMBEDDING_PRECISION=fp32"):
        check_embedder(state, (), int8)
    fp32 = OnnxEmbedder(precision="fp32", lazy=True)
    assert "only the ONNX backend makes" in precision_mismatch_hint(
        f"{DEFAULT_MODEL_ID}@int8", fp32
    )
    assert precision_mismatch_hint("other/model", fp32) == ""
