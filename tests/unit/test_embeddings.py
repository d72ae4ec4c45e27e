from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graphmem.embeddings
from graphmem.embeddings import (
    DEFAULT_MODEL_ID,
    SentenceTransformerEmbedder,
    check_vectors,
    dimension_from_files,
    packaged_model_path,
)
from graphmem.errors import EmbeddingError


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(batch_size=4)


def test_default_model_loads_offline_from_site_packages(model: SentenceTransformerEmbedder) -> None:
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert model.model_id == DEFAULT_MODEL_ID
    assert model.dimension == 384


def test_vectors_are_normalised_and_batching_does_not_change_them(
    model: SentenceTransformerEmbedder,
) -> None:
    texts = [f"fact number {i} about topic {i % 3}" for i in range(10)]
    batched = model.embed(texts)
    assert batched.shape == (10, 384)
    assert batched.dtype == np.float32
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([model.embed([t]) for t in texts])
    assert np.allclose(batched, one_by_one, atol=1e-5)


def test_similar_sentences_are_closer(model: SentenceTransformerEmbedder) -> None:
    a, b, c = model.embed(["I work at Google", "My employer is Google", "I like pancakes"])
    assert float(a @ b) > float(a @ c)


def test_empty_and_wrong_input(model: SentenceTransformerEmbedder) -> None:
    assert model.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        model.embed("a single string")


def test_unknown_model_is_a_typed_error(tmp_path: object) -> None:
    with pytest.raises(EmbeddingError, match="cannot load the embedding model"):
        SentenceTransformerEmbedder("no-such-org/no-such-model")


def test_check_vectors() -> None:
    good = check_vectors([[3.0, 4.0]], 2)
    assert np.allclose(good, [[0.6, 0.8]])
    with pytest.raises(EmbeddingError, match="dimension 3"):
        check_vectors([[1.0, 0.0]], 3)
    with pytest.raises(EmbeddingError, match="NaN"):
        check_vectors([[float("nan"), 1.0]], 2)
    with pytest.raises(EmbeddingError, match="all-zero"):
        check_vectors([[0.0, 0.0]], 2)
    # Huge and tiny rows are finite and have a direction: they normalise, never to zeros or inf.
    extreme = check_vectors([[3e19, 4e19], [3e-300, -4e-300], [1e300, 1e300]], 2)
    assert extreme.dtype == np.float32
    np.testing.assert_allclose(extreme, [[0.6, 0.8], [0.6, -0.8], [2**-0.5, 2**-0.5]], rtol=1e-6)
    with pytest.raises(EmbeddingError, match="shape"):
        check_vectors([1.0, 0.0], 2)


def test_a_lazy_embedder_loads_the_model_on_first_embed(model: SentenceTransformerEmbedder) -> None:
    lazy = SentenceTransformerEmbedder(batch_size=4, lazy=True)
    assert not lazy.loaded
    assert (lazy.model_id, lazy.dimension) == (DEFAULT_MODEL_ID, 384)
    assert lazy.embed([]).shape == (0, 384)
    assert not lazy.loaded
    vectors = lazy.embed(["I work at Google"])
    assert lazy.loaded
    np.testing.assert_allclose(vectors, model.embed(["I work at Google"]), atol=1e-6)
    assert model.loaded  # an eager one is loaded from the start


def test_a_lazy_embedder_loads_once_when_threads_race(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[str] = []

    class Model:
        def encode(self, texts: list[str], **_: Any) -> np.ndarray:
            return np.ones((len(texts), 384), dtype=np.float32)

    def load(source: str, device: str, allow_download: bool) -> tuple[Model, int]:
        loads.append(source)
        return Model(), 384

    monkeypatch.setattr(graphmem.embeddings, "_load_model", load)
    lazy = SentenceTransformerEmbedder(lazy=True)
    threads = [threading.Thread(target=lazy.embed, args=(["x"],)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loads) == 1


def test_a_model_whose_files_misstate_its_dimension_is_refused_on_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(graphmem.embeddings, "_load_model", lambda *_: (object(), 512))
    lazy = SentenceTransformerEmbedder(lazy=True)
    assert lazy.dimension == 384
    with pytest.raises(EmbeddingError, match="produces 512-d vectors, but its files describe 384"):
        lazy.embed(["x"])
    assert not lazy.loaded


def test_a_lazy_embedder_of_an_unreadable_model_loads_at_once() -> None:
    with pytest.raises(EmbeddingError, match="cannot load the embedding model"):
        SentenceTransformerEmbedder("no-such-org/no-such-model", lazy=True)


def _model_dir(
    root: Path, modules: list[tuple[str, str, dict[str, Any] | None]], **st: Any
) -> Path:
    """A model directory with the given (type, path, config) modules and top-level config."""
    listing = []
    for index, (kind, path, config) in enumerate(modules):
        listing.append(
            {
                "idx": index,
                "name": str(index),
                "path": path,
                "type": f"sentence_transformers.models.{kind}",
            }
        )
        if config is not None:
            (root / path).mkdir(parents=True, exist_ok=True)
            (root / path / "config.json").write_text(json.dumps(config))
    (root / "modules.json").write_text(json.dumps(listing))
    if st:
        (root / "config_sentence_transformers.json").write_text(json.dumps(st))
    return root


TRANSFORMER = ("Transformer", "", {"hidden_size": 768})
NORMALIZE = ("Normalize", "2_Normalize", None)


def _pool(**config: Any) -> tuple[str, str, dict[str, Any]]:
    return ("Pooling", "1_Pooling", config)


@pytest.mark.parametrize(
    ("modules", "st", "expected"),
    [
        (
            [TRANSFORMER, _pool(word_embedding_dimension=768, pooling_mode_mean_tokens=True)],
            {},
            768,
        ),
        (
            [
                TRANSFORMER,
                _pool(
                    word_embedding_dimension=768,
                    pooling_mode_mean_tokens=True,
                    pooling_mode_max_tokens=True,
                    pooling_mode_cls_token=False,
                ),
                NORMALIZE,
            ],
            {},
            1536,
        ),
        ([TRANSFORMER, _pool(embedding_dimension=512, pooling_mode="cls")], {}, 512),
        ([TRANSFORMER, _pool(embedding_dimension=512, pooling_mode=["mean", "max"])], {}, 1024),
        (
            [
                TRANSFORMER,
                _pool(word_embedding_dimension=768, pooling_mode_mean_tokens=True),
                ("Dense", "2_Dense", {"in_features": 768, "out_features": 256}),
                ("Normalize", "3_Normalize", None),
            ],
            {},
            256,
        ),
        (
            [TRANSFORMER, _pool(embedding_dimension=768, pooling_mode="mean")],
            {"truncate_dim": 128},
            128,
        ),
        (
            [TRANSFORMER, _pool(embedding_dimension=768, pooling_mode="mean")],
            {"truncate_dim": None},
            768,
        ),
        # Not understood: the model must be loaded to know.
        (
            [TRANSFORMER, _pool(embedding_dimension=768, pooling_mode="mean")],
            {"truncate_dim": "x"},
            None,
        ),
        ([TRANSFORMER, _pool(embedding_dimension=768, pooling_mode_mean_tokens=False)], {}, None),
        ([TRANSFORMER, _pool(embedding_dimension=True, pooling_mode="mean")], {}, None),
        ([TRANSFORMER, _pool(pooling_mode="mean")], {}, None),
        ([TRANSFORMER, _pool(embedding_dimension=768, pooling_mode=7)], {}, None),
        ([TRANSFORMER], {}, None),
        ([TRANSFORMER, ("Pooling", "1_Pooling", None)], {}, None),
        (
            [TRANSFORMER, _pool(embedding_dimension=768, pooling_mode="mean"), ("Router", "r", {})],
            {},
            None,
        ),
        ([TRANSFORMER, NORMALIZE], {}, None),
        ([], {}, None),
    ],
)
def test_dimension_from_files(
    tmp_path: Path,
    modules: list[tuple[str, str, dict[str, Any] | None]],
    st: dict[str, Any],
    expected: int | None,
) -> None:
    assert dimension_from_files(_model_dir(tmp_path, modules, **st)) == expected


def test_dimension_from_files_of_the_packaged_model_and_of_no_model(tmp_path: Path) -> None:
    assert dimension_from_files(packaged_model_path()) == 384
    assert dimension_from_files(tmp_path / "missing") is None
    assert dimension_from_files("sentence-transformers/all-MiniLM-L6-v2") is None
    (tmp_path / "modules.json").write_text("{not json")
    assert dimension_from_files(tmp_path) is None
