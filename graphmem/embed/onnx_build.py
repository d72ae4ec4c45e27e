"""Turn a BERT sentence-transformers model into an ONNX graph, without PyTorch.

The weights are read from the model's ``model.safetensors`` with numpy, and the graph is
written with the ``onnx`` package: the embeddings and their layer norm, then per layer ONNX
Runtime's fused ``Attention``, ``SkipLayerNormalization`` and ``BiasGelu`` operators (the
graph ONNX Runtime's own BERT optimiser produces), then the pooling the model's
``1_Pooling/config.json`` names (mean or CLS) and L2 normalisation. The int8 variant
quantises the weights of every matrix product and attention block dynamically
(``onnxruntime.quantization.quantize_dynamic``).

Only what this module understands is built: ``model_type`` ``bert`` with absolute position
embeddings and the erf GELU, a Transformer and a Pooling module with optional Normalize. For
anything else :func:`onnx_plan` says why, and the embedder falls back to sentence-transformers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import struct
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from graphmem.errors import EmbeddingError

if TYPE_CHECKING:
    import onnx

#: Changes whenever the graph this module writes changes, so that cached graphs are rebuilt.
BUILDER_VERSION = 1

Precision = Literal["int8", "fp32"]

_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64, "I32": np.int32}


@dataclass(frozen=True)
class BertPlan:
    """What the graph needs to know about a model, read from its files."""

    weights: Path
    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float
    max_positions: int
    max_seq_length: int
    pooling: str  # "mean" or "cls"


def onnx_plan(model_dir: Path) -> BertPlan | str:
    """The plan for ``model_dir``, or a sentence saying why the ONNX path cannot serve it."""
    config = _json(model_dir / "config.json")
    modules = _json(model_dir / "modules.json")
    if not isinstance(config, dict) or not isinstance(modules, list):
        return "not a local sentence-transformers model directory"
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules if isinstance(m, dict)]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return f"its modules are {kinds}, not Transformer, Pooling (and Normalize)"
    if config.get("model_type") != "bert":
        return f"its model type is {config.get('model_type')!r}, not 'bert'"
    if config.get("hidden_act") != "gelu":
        return f"its activation is {config.get('hidden_act')!r}, not 'gelu'"
    if config.get("position_embedding_type", "absolute") != "absolute":
        return "it does not use absolute position embeddings"
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        return "it has no model.safetensors"
    pooling_dir = next(
        (str(m.get("path", "")) for m in modules if str(m.get("type", "")).endswith("Pooling")), ""
    )
    pooling = _pooling_mode(_json(model_dir / pooling_dir / "config.json"))
    if pooling is None:
        return "its pooling is neither mean nor CLS"
    st_config = _json(model_dir / "sentence_bert_config.json")
    max_positions = int(config.get("max_position_embeddings", 512))
    max_seq = (
        int(st_config.get("max_seq_length") or max_positions)
        if isinstance(st_config, dict)
        else max_positions
    )
    try:
        hidden = int(config["hidden_size"])
        heads = int(config["num_attention_heads"])
        plan = BertPlan(
            weights=weights,
            hidden=hidden,
            heads=heads,
            layers=int(config["num_hidden_layers"]),
            intermediate=int(config["intermediate_size"]),
            eps=float(config.get("layer_norm_eps", 1e-12)),
            max_positions=max_positions,
            max_seq_length=min(max_seq, max_positions),
            pooling=pooling,
        )
    except (KeyError, TypeError, ValueError) as exc:
        return f"its config.json is incomplete ({exc})"
    if hidden % heads:
        return "its hidden size is not a multiple of its heads"
    return plan


def _pooling_mode(config: Any) -> str | None:
    if not isinstance(config, dict):
        return None
    mode = config.get("pooling_mode")
    if isinstance(mode, list) and len(mode) == 1:
        mode = mode[0]
    if mode is None:
        flags = [k for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
        mode = (
            {
                "pooling_mode_mean_tokens": "mean",
                "pooling_mode_cls_token": "cls",
            }.get(flags[0])
            if len(flags) == 1
            else None
        )
    return mode if mode in ("mean", "cls") else None


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of a ``.safetensors`` file as a numpy array (float32 for float tensors)."""
    try:
        with path.open("rb") as stream:
            (length,) = struct.unpack("<Q", stream.read(8))
            header = json.loads(stream.read(length))
            data = stream.read()
    except (OSError, ValueError, struct.error) as exc:
        raise EmbeddingError(f"cannot read the model weights {path}: {exc}") from exc
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        kind = info["dtype"]
        raw = data[start:end]
        if kind == "BF16":
            as_int = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            array: npt.NDArray[Any] = as_int.view(np.float32)
        elif kind in _DTYPES and _DTYPES[kind] is not None:
            array = np.frombuffer(raw, dtype=_DTYPES[kind])
        else:
            raise EmbeddingError(f"the model weights {path} hold a {kind} tensor ({name})")
        array = array.reshape(info["shape"])
        tensors[name] = array.astype(np.float32) if array.dtype.kind == "f" else array
    return tensors


def build_graph(plan: BertPlan) -> onnx.ModelProto:
    """The float32 ONNX graph of the model: inputs ``input_ids`` and ``attention_mask``
    (int64, batch by sequence), output ``sentence_embedding`` (float32, unit rows)."""
    from onnx import TensorProto, helper, numpy_helper

    raw = read_safetensors(plan.weights)
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""

    def weight(name: str) -> npt.NDArray[np.float32]:
        try:
            return np.ascontiguousarray(raw[prefix + name], dtype=np.float32)
        except KeyError:
            raise EmbeddingError(f"the model weights lack {prefix + name}") from None

    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, value: npt.NDArray[Any]) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(
        op: str, inputs: list[str], outputs: list[str], domain: str = "", **attrs: Any
    ) -> None:
        nodes.append(helper.make_node(op, inputs, outputs, domain=domain or None, **attrs))

    ms = "com.microsoft"
    # Embeddings: words + positions + token type 0 (single sentences), then layer norm.
    word = const("word_embeddings", weight("embeddings.word_embeddings.weight"))
    positions = weight("embeddings.position_embeddings.weight")
    token_type = weight("embeddings.token_type_embeddings.weight")[0]
    const("position_embeddings", positions + token_type)
    const("zero", np.array([0], dtype=np.int64))
    const("one", np.array([1], dtype=np.int64))
    node("Shape", ["input_ids"], ["ids_shape"])
    node("Slice", ["ids_shape", "one", "ids_shape_end"], ["seq_len"])
    const("ids_shape_end", np.array([2], dtype=np.int64))
    node("Slice", ["position_embeddings", "zero", "seq_len", "zero"], ["positions"])
    node("Gather", [word, "input_ids"], ["words"])
    node("Add", ["words", "positions"], ["embedded"])
    node(
        "LayerNormalization",
        [
            "embedded",
            const("emb_ln_w", weight("embeddings.LayerNorm.weight")),
            const("emb_ln_b", weight("embeddings.LayerNorm.bias")),
        ],
        ["hidden_0"],
        axis=-1,
        epsilon=plan.eps,
    )
    node("Cast", ["attention_mask"], ["mask_int"], to=TensorProto.INT32)
    hidden = "hidden_0"
    for i in range(plan.layers):
        layer = f"encoder.layer.{i}."
        qkv_w = np.concatenate(
            [weight(layer + f"attention.self.{p}.weight").T for p in ("query", "key", "value")],
            axis=1,
        )
        qkv_b = np.concatenate(
            [weight(layer + f"attention.self.{p}.bias") for p in ("query", "key", "value")]
        )
        node(
            "Attention",
            [hidden, const(f"l{i}_qkv_w", qkv_w), const(f"l{i}_qkv_b", qkv_b), "mask_int"],
            [f"l{i}_context"],
            domain=ms,
            num_heads=plan.heads,
        )
        node(
            "MatMul",
            [
                f"l{i}_context",
                const(f"l{i}_out_w", weight(layer + "attention.output.dense.weight").T),
            ],
            [f"l{i}_attn"],
        )
        node(
            "SkipLayerNormalization",
            [
                f"l{i}_attn",
                hidden,
                const(f"l{i}_ln1_w", weight(layer + "attention.output.LayerNorm.weight")),
                const(f"l{i}_ln1_b", weight(layer + "attention.output.LayerNorm.bias")),
                const(f"l{i}_out_b", weight(layer + "attention.output.dense.bias")),
            ],
            [f"l{i}_mid"],
            domain=ms,
            epsilon=plan.eps,
        )
        node(
            "MatMul",
            [f"l{i}_mid", const(f"l{i}_ff1_w", weight(layer + "intermediate.dense.weight").T)],
            [f"l{i}_ff1"],
        )
        node(
            "BiasGelu",
            [f"l{i}_ff1", const(f"l{i}_ff1_b", weight(layer + "intermediate.dense.bias"))],
            [f"l{i}_act"],
            domain=ms,
        )
        node(
            "MatMul",
            [f"l{i}_act", const(f"l{i}_ff2_w", weight(layer + "output.dense.weight").T)],
            [f"l{i}_ff2"],
        )
        node(
            "SkipLayerNormalization",
            [
                f"l{i}_ff2",
                f"l{i}_mid",
                const(f"l{i}_ln2_w", weight(layer + "output.LayerNorm.weight")),
                const(f"l{i}_ln2_b", weight(layer + "output.LayerNorm.bias")),
                const(f"l{i}_ff2_b", weight(layer + "output.dense.bias")),
            ],
            [f"hidden_{i + 1}"],
            domain=ms,
            epsilon=plan.eps,
        )
        hidden = f"hidden_{i + 1}"
    # Pooling over the real tokens (mean) or the first one (CLS), then unit length.
    if plan.pooling == "mean":
        node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT)
        node("Unsqueeze", ["mask_float", const("axis_2", np.array([2], dtype=np.int64))], ["m3"])
        node("Mul", [hidden, "m3"], ["masked"])
        node("ReduceSum", ["masked", "one"], ["summed"], keepdims=0)
        node("ReduceSum", ["mask_float", "one"], ["counts"], keepdims=1)
        node("Max", ["counts", const("tiny", np.array(1e-9, dtype=np.float32))], ["safe_counts"])
        node("Div", ["summed", "safe_counts"], ["pooled"])
    else:
        node("Gather", [hidden, const("first", np.array(0, dtype=np.int64))], ["pooled"], axis=1)
    node("ReduceL2", ["pooled", "one"], ["norms"], keepdims=1)
    node("Max", ["norms", const("tiny_norm", np.array(1e-12, dtype=np.float32))], ["safe_norms"])
    node("Div", ["pooled", "safe_norms"], ["sentence_embedding"])

    graph = helper.make_graph(
        nodes,
        "graphmem_sentence_embedding",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.INT64, ["batch", "sequence"]
            ),
        ],
        [
            helper.make_tensor_value_info(
                "sentence_embedding", TensorProto.FLOAT, ["batch", plan.hidden]
            )
        ],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(ms, 1)],
        producer_name="graphmem",
        producer_version=str(BUILDER_VERSION),
    )
    model.ir_version = 8
    return model


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --- the cache -------------------------------------------------------------------------------
@dataclass(frozen=True)
class BuiltGraph:
    """An ONNX graph in the cache: its file, its SHA-256, and how long making it took
    (0 when it was already there)."""

    path: Path
    sha256: str
    build_seconds: float


def cached_graph(
    plan: BertPlan, source_digest: str, precision: Precision, cache_dir: Path
) -> BuiltGraph:
    """The ONNX graph of the model whose files have ``source_digest``, in ``precision``: read
    from ``<cache_dir>/onnx`` when a graph is there whose content still has the SHA-256 its
    manifest recorded, otherwise built (under a file lock, so that processes starting together
    build it once) and written there atomically with its manifest."""
    folder = cache_dir.expanduser() / "onnx"
    stem = f"{source_digest[:16]}-b{BUILDER_VERSION}-{precision}"
    graph, manifest = folder / f"{stem}.onnx", folder / f"{stem}.json"
    found = _verified(graph, manifest)
    if found is not None:
        return BuiltGraph(graph, found, 0.0)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbeddingError(f"cannot create the ONNX cache {folder}: {exc}") from exc
    with _locked(folder / f"{stem}.lock"):
        found = _verified(graph, manifest)  # another process may have built it meanwhile
        if found is not None:
            return BuiltGraph(graph, found, 0.0)
        began = time.perf_counter()
        data = _serialised(plan, precision)
        digest = hashlib.sha256(data).hexdigest()
        seconds = time.perf_counter() - began
        record = {
            "source_sha256": source_digest,
            "precision": precision,
            "builder": BUILDER_VERSION,
            "sha256": digest,
            "size": len(data),
            "build_seconds": round(seconds, 3),
        }
        try:
            _write_atomically(graph, data)
            _write_atomically(manifest, json.dumps(record, indent=1).encode())
        except OSError as exc:
            raise EmbeddingError(f"cannot write the ONNX graph into {folder}: {exc}") from exc
        return BuiltGraph(graph, digest, seconds)


def _serialised(plan: BertPlan, precision: Precision) -> bytes:
    """The graph's bytes: float32, or with int8 weights (per output channel) in every matrix
    product, attention block and the word embeddings, activations quantised dynamically."""
    model = build_graph(plan)
    if precision == "fp32":
        return bytes(model.SerializeToString())
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with (
        tempfile.TemporaryDirectory(prefix="graphmem-onnx-") as work,
        _quiet_quantiser(),
    ):
        source, target = Path(work, "fp32.onnx"), Path(work, "int8.onnx")
        onnx.save(model, source)
        quantize_dynamic(
            source,
            target,
            # The word embeddings too (Gather): a 23 MB graph instead of 58 MB, at no cost
            # in agreement with the float vectors.
            op_types_to_quantize=["MatMul", "Attention", "Gather"],
            per_channel=True,
            weight_type=QuantType.QInt8,
            # The fused operators are ONNX Runtime's own, which ONNX's shape inference does
            # not type: their outputs are float32.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        return target.read_bytes()


def _verified(graph: Path, manifest: Path) -> str | None:
    """The graph's SHA-256 when the file is there and matches its manifest; None otherwise."""
    record = _json(manifest)
    if not isinstance(record, dict) or not graph.is_file():
        return None
    try:
        with graph.open("rb") as stream:
            digest = hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError:
        return None
    return digest if digest == record.get("sha256") else None


@contextlib.contextmanager
def _quiet_quantiser() -> Iterator[None]:
    """The quantiser's advice to pre-process the model (through the root logger) kept out of
    graphmem's output: the graph it is given is already the fused one."""
    import logging

    root = logging.getLogger()
    level = root.level
    # logging.warning() configures a stderr handler on a root logger that has none.
    placeholder = logging.NullHandler()
    root.addHandler(placeholder)
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)
        root.removeHandler(placeholder)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_atomically(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
