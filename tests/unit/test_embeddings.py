from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graphmem.embed.identity
import graphmem.embed.torch_embedder
from graphmem.embed.embedder import check_vectors
from graphmem.embed.identity import (
    DEFAULT_MODEL_ID,
    DIGEST_CACHE_FILE,
    dimension_from_files,
    model_id_for,
    packaged_model_path,
)
from graphmem.embed.torch_embedder import SentenceTransformerEmbedder
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
    # Values are numbers, not read as numbers: no booleans or numeric strings.
    wrongs: list[Any] = [[[True, False]], [["0.6", "0.8"]], [[0.6, None]]]
    for wrong in wrongs:
        with pytest.raises(EmbeddingError, match="must hold numbers"):
            check_vectors(wrong, 2)
    assert np.allclose(check_vectors(np.array([[3, 4]], dtype=np.int64), 2), [[0.6, 0.8]])


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

    monkeypatch.setattr(graphmem.embed.torch_embedder, "_load_model", load)
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
    monkeypatch.setattr(graphmem.embed.torch_embedder, "_load_model", lambda *_: (object(), 512))
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


# --- model identity ------------------------------------------------------------------------
def _fake_model(root: Path, weights: bytes = b"weights", **extra: bytes) -> Path:
    """A model-like folder: fake weights, a tokenizer and configs, and files that do not count."""
    root.mkdir(parents=True)
    _model_dir(root, [TRANSFORMER, _pool(embedding_dimension=768, pooling_mode="mean")])
    (root / "model.safetensors").write_bytes(weights)
    (root / "tokenizer.json").write_text('{"model": "wordpiece"}')
    (root / "vocab.txt").write_text("[PAD]\nhello\n")
    for name, content in extra.items():
        (root / name).write_bytes(content)
    return root


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files whose content is hashed (not served from the cache), in order."""
    hashed: list[Path] = []
    real = graphmem.embed.identity._file_sha256

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(graphmem.embed.identity, "_file_sha256", counting)
    return hashed


def test_a_local_model_is_identified_by_content_not_location(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    one = model_id_for(_fake_model(tmp_path / "x" / "model"), cache_dir=cache)
    moved = model_id_for(_fake_model(tmp_path / "y" / "model"), cache_dir=cache)
    assert one == moved
    assert re.fullmatch(r"model@sha256:[0-9a-f]{16}", one)
    # The same content in a folder of another name keeps its digest; the name is a label.
    renamed = model_id_for(_fake_model(tmp_path / "z" / "mini"), cache_dir=cache)
    assert renamed == "mini@" + one.split("@", 1)[1]


def test_different_models_in_folders_of_the_same_name_differ(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    a = model_id_for(_fake_model(tmp_path / "a" / "model", b"weights A"), cache_dir=cache)
    b = model_id_for(_fake_model(tmp_path / "b" / "model", b"weights B"), cache_dir=cache)
    assert a != b
    assert a.startswith("model@sha256:") and b.startswith("model@sha256:")


@pytest.mark.parametrize(
    ("path", "content", "counts"),
    [
        ("1_Pooling/config.json", b'{"embedding_dimension": 768, "pooling_mode": "cls"}', True),
        ("sentence_bert_config.json", b'{"max_seq_length": 128}', True),
        ("tokenizer_config.json", b'{"do_lower_case": false}', True),
        ("special_tokens_map.json", b"{}", True),
        ("pytorch_model.bin", b"other weights", True),
        ("2_Dense/model.safetensors", b"dense", True),
        ("spiece.model", b"sentencepiece", True),
        ("README.md", b"# a model card", False),
        (".gitattributes", b"*.bin filter=lfs", False),
        ("onnx/model.onnx", b"an export", False),
        ("openvino/openvino_model.bin", b"an export", False),
        (".cache/huggingface/download/x.json", b"{}", False),
    ],
)
def test_which_files_make_the_identity(
    tmp_path: Path, path: str, content: bytes, counts: bool
) -> None:
    cache = tmp_path / "cache"
    plain = _fake_model(tmp_path / "plain" / "model")
    changed = _fake_model(tmp_path / "changed" / "model")
    (changed / path).parent.mkdir(parents=True, exist_ok=True)
    (changed / path).write_bytes(content)
    same = model_id_for(plain, cache_dir=cache) == model_id_for(changed, cache_dir=cache)
    assert same is not counts


def test_the_packaged_directory_is_the_default_model(tmp_path: Path, hashes: list[Path]) -> None:
    packaged = packaged_model_path()
    assert model_id_for(packaged, cache_dir=tmp_path) == DEFAULT_MODEL_ID
    # However it is spelt: through a symlink, or with a trailing "/.".
    (tmp_path / "link").symlink_to(packaged)
    assert model_id_for(tmp_path / "link", cache_dir=tmp_path) == DEFAULT_MODEL_ID
    assert model_id_for(f"{packaged}/.", cache_dir=tmp_path) == DEFAULT_MODEL_ID
    assert hashes == []  # recognised by its path, never hashed
    lazy = SentenceTransformerEmbedder(packaged, lazy=True, cache_dir=tmp_path)
    assert (lazy.model_id, lazy.dimension, lazy.loaded) == (DEFAULT_MODEL_ID, 384, False)
    assert lazy.legacy_model_id == "model"  # what older graphmem recorded for this path


def test_a_name_that_is_not_a_path_is_recorded_as_given(tmp_path: Path) -> None:
    assert model_id_for("BAAI/bge-base-en-v1.5", cache_dir=tmp_path) == "BAAI/bge-base-en-v1.5"


def test_the_digest_cache_spares_rehashing_until_a_file_changes(
    tmp_path: Path, hashes: list[Path]
) -> None:
    cache = tmp_path / "cache"
    model = _fake_model(tmp_path / "model")
    first = model_id_for(model, cache_dir=cache)
    hashed_files = {p.relative_to(model).as_posix() for p in hashes}
    assert hashed_files == {
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "vocab.txt",
        "modules.json",
        "1_Pooling/config.json",
    }
    assert (cache / DIGEST_CACHE_FILE).is_file()

    hashes.clear()
    assert model_id_for(model, cache_dir=cache) == first
    assert hashes == []  # every file served from the cache

    # New content of another size: hashed again, a new identity.
    weights = model / "model.safetensors"
    weights.write_bytes(b"retrained weights")
    second = model_id_for(model, cache_dir=cache)
    assert hashes == [weights] and second != first

    # The same size but a new mtime: hashed again (here the content is unchanged).
    hashes.clear()
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert model_id_for(model, cache_dir=cache) == second
    assert hashes == [weights]

    # Without a cache directory of its own, nothing is remembered: every call hashes.
    hashes.clear()
    model_id_for(model, cache_dir=tmp_path / "other")
    assert len(hashes) == 6


def test_an_unusable_digest_cache_only_costs_hashing(tmp_path: Path, hashes: list[Path]) -> None:
    model = _fake_model(tmp_path / "model")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory should be")
    expected = model_id_for(model, cache_dir=tmp_path / "cache")
    assert model_id_for(model, cache_dir=blocked) == expected
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / DIGEST_CACHE_FILE).write_text("{not json")
    hashes.clear()
    assert model_id_for(model, cache_dir=corrupt) == expected
    assert len(hashes) == 6
    assert json.loads((corrupt / DIGEST_CACHE_FILE).read_text())["version"] == 1


def test_the_embedder_records_a_content_identity_and_an_explicit_one_wins(
    tmp_path: Path, hashes: list[Path]
) -> None:
    model = _fake_model(tmp_path / "model")
    lazy = SentenceTransformerEmbedder(model, lazy=True, cache_dir=tmp_path / "cache")
    assert not lazy.loaded and lazy.dimension == 768
    assert lazy.model_id == model_id_for(model, cache_dir=tmp_path / "cache")
    assert lazy.legacy_model_id == "model"
    hashes.clear()
    named = SentenceTransformerEmbedder(model, model_id="mine", lazy=True, cache_dir=tmp_path)
    assert named.model_id == "mine"
    assert hashes == []  # an explicit identity needs no hashing


def test_from_settings_caches_digests_in_the_settings_cache_dir(tmp_path: Path) -> None:
    from graphmem.settings import load_settings

    model = _fake_model(tmp_path / "model")
    settings = load_settings(embedding_model=str(model), cache_dir=tmp_path / "cache")
    embedder = SentenceTransformerEmbedder.from_settings(settings, lazy=True)
    assert embedder.model_id.startswith("model@sha256:")
    assert (tmp_path / "cache" / DIGEST_CACHE_FILE).is_file()
    named = load_settings(embedding_model=str(model), embedding_model_id="model")
    assert SentenceTransformerEmbedder.from_settings(named, lazy=True).model_id == "model"


def test_a_mismatch_with_a_folder_name_identity_explains_itself(tmp_path: Path) -> None:
    from graphmem.errors import EmbedderMismatchError
    from graphmem.store.indexes import check_embedder

    model = _fake_model(tmp_path / "model")
    embedder = SentenceTransformerEmbedder(model, lazy=True, cache_dir=tmp_path)
    recorded = {"embedder_model": "model", "embedding_dimension": 768}
    with pytest.raises(EmbedderMismatchError, match="model mismatch") as info:
        check_embedder(recorded, (), embedder)
    message = str(info.value)
    assert "folder name alone ('model')" in message
    assert "GRAPHMEM_EMBEDDING_MODEL_ID=model" in message and "graphmem reembed" in message
    assert info.value.graph_model == "model"
    # Pinned to the recorded name, it is accepted.
    pinned = SentenceTransformerEmbedder(model, model_id="model", lazy=True)
    check_embedder(recorded, (), pinned)
    # Another recorded name, or another dimension, is a plain mismatch.
    for other in (
        {"embedder_model": "other", "embedding_dimension": 768},
        {"embedder_model": "model", "embedding_dimension": 384},
    ):
        with pytest.raises(EmbedderMismatchError) as plain:
            check_embedder(other, (), embedder)
        assert "folder name" not in str(plain.value)
    # The packaged directory, recorded by folder name by older graphmem, is explained too.
    packaged = SentenceTransformerEmbedder(packaged_model_path(), lazy=True, cache_dir=tmp_path)
    with pytest.raises(EmbedderMismatchError, match="folder name alone"):
        check_embedder({"embedder_model": "model", "embedding_dimension": 384}, (), packaged)
    check_embedder({"embedder_model": DEFAULT_MODEL_ID, "embedding_dimension": 384}, (), packaged)
