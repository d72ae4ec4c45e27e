"""Turn a BERT sentence-transformers model into an ONNX graph, without PyTorch.

The weights are read from the model's ``model.safetensors`` with numpy, and the graph is
written with the ``onnx`` package: the embeddings and their layer norm, then per layer the
query/key/value projection, ONNX Runtime's ``MultiHeadAttention``, ``SkipLayerNormalization``
and ``BiasGelu`` operators and the feed-forward products, then the pooling the model's
``1_Pooling/config.json`` names (mean or CLS) and L2 normalisation. The normalisation is
always there, with or without the model's own Normalize module: graphmem stores unit vectors
from every backend (the torch backend asks sentence-transformers for them too), so the two
backends agree on every model the ONNX path serves.

In ``int8`` every matrix product has int8 weights (one scale per output channel) and int8
activations with one scale per token, computed as the graph runs (``MatMulIntegerToFloat``),
and the word embeddings are int8 with one scale per row. Per token, not per batch: ONNX
Runtime's own dynamic quantisation scales a whole batch at once, so that a text's vector
would depend on the texts it is batched with; here it never does.

Only what this module understands is built: ``model_type`` ``bert`` with absolute position
embeddings and the erf GELU, a Transformer and a Pooling module with optional Normalize. For
anything else :func:`onnx_plan` says why, and the embedder falls back to sentence-transformers.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from graphmem._json import json_file
from graphmem.errors import EmbeddingError

if TYPE_CHECKING:
    import onnx

#: Changes whenever the graph this module writes changes, so that cached graphs are rebuilt.
BUILDER_VERSION = 3

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
    config = json_file(model_dir / "config.json")
    modules = json_file(model_dir / "modules.json")
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
    pooling = _pooling_mode(json_file(model_dir / pooling_dir / "config.json"))
    if pooling is None:
        return "its pooling is neither mean nor CLS"
    st_config = json_file(model_dir / "sentence_bert_config.json")
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


class _GraphWriter:
    """The nodes and initializers of a graph being written, with the one helper that differs
    between the precisions: :meth:`linear`."""

    def __init__(self, precision: Precision) -> None:
        self.precision = precision
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def const(self, name: str, value: npt.ArrayLike) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, ms: bool = False, **attrs: Any) -> str:
        from onnx import helper

        domain = _MS if ms else None
        self.nodes.append(helper.make_node(op, inputs, [output], domain=domain, **attrs))
        return output

    def linear(self, x: str, weight: npt.NDArray[np.float32], name: str) -> str:
        """``x @ weight.T`` (``weight`` as a torch Linear stores it: out by in features), without
        the bias, which the operator after it adds. In int8 the weights are quantised per output
        channel and each token's activations per token (its own scale, symmetric, stored as
        uint8 around 128), so that a text's vector never depends on the texts batched with it."""
        matrix = np.ascontiguousarray(weight.T)
        if self.precision == "fp32":
            return self.node("MatMul", [x, self.const(f"{name}_w", matrix)], name)
        from onnx import TensorProto

        inputs, outputs = matrix.shape
        scale = np.maximum(np.abs(matrix).max(axis=0), 1e-8) / 127.0
        quantised = np.round(matrix / scale).astype(np.int8)
        rows = self.node("Reshape", [x, self.const(f"{name}_rows", [-1, inputs])], f"{name}_x")
        peak = self.node("ReduceMax", [self.node("Abs", [rows], f"{name}_abs"), "one"],
                         f"{name}_peak", keepdims=1)  # fmt: skip
        peak = self.node("Max", [peak, "tiny"], f"{name}_safe_peak")
        to_int = self.node("Div", ["int_range", peak], f"{name}_to_int")
        row_scale = self.node("Div", [peak, "int_range"], f"{name}_row_scale")
        levels = self.node("Round", [self.node("Mul", [rows, to_int], f"{name}_scaled")],
                           f"{name}_levels")  # fmt: skip
        shifted = self.node("Add", [levels, "uint8_zero"], f"{name}_shifted")
        as_uint8 = self.node("Cast", [shifted], f"{name}_q", to=TensorProto.UINT8)
        product = self.node(
            "MatMulIntegerToFloat",
            [
                as_uint8,
                self.const(f"{name}_wq", quantised),
                "unit",
                self.const(f"{name}_ws", scale.astype(np.float32)),
                "uint8_zero_point",
            ],
            f"{name}_product",
            ms=True,
        )
        flat = self.node("Mul", [product, row_scale], f"{name}_flat")
        shape = self.node("Concat", ["batch_and_sequence", self.const(f"{name}_width",
                          [outputs])], f"{name}_shape", axis=0)  # fmt: skip
        return self.node("Reshape", [flat, shape], name)

    def embedding(self, table: npt.NDArray[np.float32], ids: str) -> str:
        """The rows of ``table`` for ``ids``; in int8, each row quantised with its own scale."""
        if self.precision == "fp32":
            return self.node("Gather", [self.const("word_embeddings", table), ids], "words")
        from onnx import TensorProto

        scale = np.maximum(np.abs(table).max(axis=1, keepdims=True), 1e-8) / 127.0
        quantised = self.const("word_embeddings_q", np.round(table / scale).astype(np.int8))
        scales = self.const("word_embeddings_s", scale.astype(np.float32))
        rows = self.node("Cast", [self.node("Gather", [quantised, ids], "words_q")],
                         "words_f", to=TensorProto.FLOAT)  # fmt: skip
        return self.node("Mul", [rows, self.node("Gather", [scales, ids], "words_s")], "words")


_MS = "com.microsoft"


def build_graph(plan: BertPlan, precision: Precision = "fp32") -> onnx.ModelProto:
    """The ONNX graph of the model in ``precision``: inputs ``input_ids`` and
    ``attention_mask`` (int64, batch by sequence), output ``sentence_embedding`` (float32,
    unit rows). Layer norms, attention (softmax over the masked scores), GELU, pooling and
    normalisation run in float32 in both precisions; int8 quantises the matrix products and
    the word embeddings (:meth:`_GraphWriter.linear`)."""
    from onnx import TensorProto, helper

    weight = _weights(plan.weights)
    g = _GraphWriter(precision)
    _constants(g, precision)
    hidden = _embeddings(g, plan, weight)
    mask = g.node("Cast", ["attention_mask"], "key_padding_mask", to=TensorProto.INT32)
    for i in range(plan.layers):
        hidden = _layer(g, plan, weight, i, hidden, mask)
    _pooled(g, plan, hidden)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask")
    ]
    output = helper.make_tensor_value_info(
        "sentence_embedding", TensorProto.FLOAT, ["batch", plan.hidden]
    )
    graph = helper.make_graph(
        g.nodes, "graphmem_sentence_embedding", inputs, [output], g.initializers
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(_MS, 1)],
        producer_name="graphmem",
        producer_version=str(BUILDER_VERSION),
    )
    model.ir_version = 8
    return model


_Weight = Callable[[str], npt.NDArray[np.float32]]


def _weights(path: Path) -> _Weight:
    """The model's weights by name, with or without the ``bert.`` prefix of its file."""
    raw = read_safetensors(path)
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""

    def weight(name: str) -> npt.NDArray[np.float32]:
        try:
            return np.ascontiguousarray(raw[prefix + name], dtype=np.float32)
        except KeyError:
            raise EmbeddingError(f"the model weights lack {prefix + name}") from None

    return weight


def _constants(g: _GraphWriter, precision: Precision) -> None:
    """The constants the nodes name: axes and bounds, the floor of a divisor, and in int8 those
    of the quantisation."""
    constants: list[tuple[str, npt.NDArray[Any]]] = [
        ("zero", np.array([0], dtype=np.int64)),
        ("one", np.array([1], dtype=np.int64)),
        ("two", np.array([2], dtype=np.int64)),
        ("tiny", np.array(1e-9, dtype=np.float32)),
    ]
    if precision == "int8":
        constants += [
            ("int_range", np.array(127.0, dtype=np.float32)),
            ("uint8_zero", np.array(128.0, dtype=np.float32)),
            ("uint8_zero_point", np.array(128, dtype=np.uint8)),
            ("unit", np.array(1.0, dtype=np.float32)),
        ]
    for name, value in constants:
        g.const(name, value)


def _embeddings(g: _GraphWriter, plan: BertPlan, weight: _Weight) -> str:
    """The embedded tokens: words + positions + token type 0 (single sentences), then layer
    norm."""
    positions = weight("embeddings.position_embeddings.weight")
    g.const("positions_table", positions + weight("embeddings.token_type_embeddings.weight")[0])
    ids_shape = g.node("Shape", ["input_ids"], "ids_shape")
    g.node("Slice", [ids_shape, "zero", "two"], "batch_and_sequence")
    length = g.node("Slice", [ids_shape, "one", "two"], "sequence_length")
    g.node("Slice", ["positions_table", "zero", length, "zero"], "positions")
    words = g.embedding(weight("embeddings.word_embeddings.weight"), "input_ids")
    return g.node(
        "LayerNormalization",
        [
            g.node("Add", [words, "positions"], "embedded"),
            g.const("emb_ln_w", weight("embeddings.LayerNorm.weight")),
            g.const("emb_ln_b", weight("embeddings.LayerNorm.bias")),
        ],
        "hidden_0",
        axis=-1,
        epsilon=plan.eps,
    )


def _layer(g: _GraphWriter, plan: BertPlan, weight: _Weight, i: int, hidden: str, mask: str) -> str:
    """Encoder layer ``i`` over ``hidden``: attention, then the feed-forward products, each
    added to its input and layer-normed."""
    from onnx import helper

    def w(name: str) -> npt.NDArray[np.float32]:
        return weight(f"encoder.layer.{i}.{name}")

    def added_and_normed(x: str, skip: str, block: str, names: tuple[str, str], output: str) -> str:
        """``x`` plus ``block``'s dense bias plus ``skip``, layer-normed with ``block``'s
        LayerNorm (ONNX Runtime's SkipLayerNormalization); ``names`` name the constants."""
        norm, bias = names
        constants = [
            g.const(f"l{i}_{norm}_w", w(f"{block}.LayerNorm.weight")),
            g.const(f"l{i}_{norm}_b", w(f"{block}.LayerNorm.bias")),
            g.const(f"l{i}_{bias}", w(f"{block}.dense.bias")),
        ]
        return g.node(
            "SkipLayerNormalization", [x, skip, *constants], output, ms=True, epsilon=plan.eps
        )

    parts = ("query", "key", "value")
    qkv = g.linear(
        hidden, np.concatenate([w(f"attention.self.{p}.weight") for p in parts]), f"l{i}_qkv"
    )
    split = g.const(f"l{i}_split", np.array([plan.hidden] * 3, dtype=np.int64))
    g.nodes.append(
        helper.make_node("Split", [qkv, split], [f"l{i}_q", f"l{i}_k", f"l{i}_v"], axis=2)
    )
    context = g.node(
        "MultiHeadAttention",
        [
            f"l{i}_q",
            f"l{i}_k",
            f"l{i}_v",
            g.const(f"l{i}_qkv_b", np.concatenate([w(f"attention.self.{p}.bias") for p in parts])),
            mask,
        ],
        f"l{i}_context",
        ms=True,
        num_heads=plan.heads,
    )
    attended = g.linear(context, w("attention.output.dense.weight"), f"l{i}_attn")
    middle = added_and_normed(attended, hidden, "attention.output", ("ln1", "out_b"), f"l{i}_mid")
    widened = g.linear(middle, w("intermediate.dense.weight"), f"l{i}_ff1")
    active = g.node(
        "BiasGelu", [widened, g.const(f"l{i}_ff1_b", w("intermediate.dense.bias"))],
        f"l{i}_act", ms=True,
    )  # fmt: skip
    narrowed = g.linear(active, w("output.dense.weight"), f"l{i}_ff2")
    return added_and_normed(narrowed, middle, "output", ("ln2", "ff2_b"), f"hidden_{i + 1}")


def _pooled(g: _GraphWriter, plan: BertPlan, hidden: str) -> None:
    """``sentence_embedding``: pooling over the real tokens (mean) or the first one (CLS),
    then unit length."""
    from onnx import TensorProto

    if plan.pooling == "mean":
        weights = g.node("Cast", ["attention_mask"], "mask_float", to=TensorProto.FLOAT)
        masked = g.node("Mul", [hidden, g.node("Unsqueeze", [weights, "two"], "mask_3d")], "masked")
        summed = g.node("ReduceSum", [masked, "one"], "summed", keepdims=0)
        counts = g.node("ReduceSum", [weights, "one"], "counts", keepdims=1)
        pooled = g.node("Div", [summed, g.node("Max", [counts, "tiny"], "safe_counts")], "pooled")
    else:
        first = g.const("first", np.array(0, dtype=np.int64))
        pooled = g.node("Gather", [hidden, first], "pooled", axis=1)
    norms = g.node("ReduceL2", [pooled, "one"], "norms", keepdims=1)
    g.node("Div", [pooled, g.node("Max", [norms, "tiny"], "safe_norms")], "sentence_embedding")
