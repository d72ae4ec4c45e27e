from __future__ import annotations

import numpy as np
import pytest

from graphmem.embeddings import DEFAULT_MODEL_ID, SentenceTransformerEmbedder, check_vectors
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
