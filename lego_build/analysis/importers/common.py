"""Shared pieces of the ONNX and TFLite importers: op tables and the layer collector.

Every operator of an imported model becomes exactly one of:

* an **array** layer (``Layer.kernel`` set): ``conv2d`` / ``depthwise`` (groups ==
  in_channels > 1) / ``group_conv`` (other groups > 1) on the ``conv2d`` kernel family;
  ``fc`` (Gemm / FULLY_CONNECTED: a GEMM with M = rows of the activation, N = out
  features, K = in features) and ``matmul`` (MatMul / BATCH_MATMUL) on the ``gemm`` family;
* a **PPU** layer (``kernel is None``, ``elements > 0``): one of :data:`PPU_OPS`, with
  its output element count, or its input element count for reductions (pooling,
  global pooling / mean, softmax);
* a **layout** layer (``kernel is None``, ``elements == 0``): reshape, transpose,
  concat, pad, ... -- data movement that folds into addressing; listed so users see it;
* **skipped** graph plumbing: ``Constant`` / ``Shape``-like ops and any known op all of
  whose inputs are constants (shape arithmetic, weight dequantisation): these are
  constant-folded before inference and never execute on the accelerator;
* an :class:`~lego_build.ir.workload.Unmapped` entry with a reason, for everything else.

Matmul shapes (:func:`matmul_dims`): ``A[..., M, K] x B[..., K, N]``. When ``B`` has no
leading (batch) dims -- a weight shared by every row, as in a linear layer applied to
``[batch, seq, K]`` -- the leading dims of ``A`` fold into ``M`` (one ``[K, N]`` weight
tensor, reused by every row). Otherwise ``batch`` is the product of the broadcast
leading dims (attention ``Q K^T``, ``P V``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Callable

from lego_build.analysis.kernels import conv2d, gemm
from lego_build.errors import ConfigError
from lego_build.ir.workload import Kernel, Layer, Unmapped, Workload, conv_op


@dataclass(frozen=True)
class Importer:
    """A model-file format (``workload.kind``): ``load(path, name, batch, bits)`` builds the
    workload or raises a one-line :class:`ConfigError`; ``hint`` says what to give instead.
    ``symbols``: ``load`` also takes ``symbols=``, the values of the model's named dims
    (``workload.symbols``); the other formats refuse them."""

    name: str
    load: Callable[..., Workload]
    hint: str
    symbols: bool = False


class SettingError(ConfigError):
    """A workload setting that does not fit the file (``workload.symbols``, ``workload.batch``):
    the message says what to set, so no advice on the file is added."""

# ----------------------------------------------------------------------------- vocabulary
#: PPU op names the importers emit (element-wise, normalisation, pooling, quantisation).
PPU_OPS = frozenset({
    "relu", "relu6", "clip", "gelu", "sigmoid", "tanh", "hswish", "silu",
    "softmax", "layernorm", "batchnorm", "rmsnorm", "lrn",
    "maxpool", "avgpool", "add", "mul", "quantize", "dequantize",
})

#: Element basis of a PPU op: ``"out"`` counts output elements, ``"in"`` the first input's
#: (reductions: pooling, global pooling / mean, softmax).
IN, OUT = "in", "out"

# ----------------------------------------------------------------------------- ONNX tables
#: ONNX (default domain) op -> (PPU op, element basis). ``Clip`` is decided by its bounds.
ONNX_PPU: dict[str, tuple[str, str]] = {
    "Relu": ("relu", OUT),
    "Gelu": ("gelu", OUT),
    "Sigmoid": ("sigmoid", OUT),
    "Tanh": ("tanh", OUT),
    "HardSwish": ("hswish", OUT),
    "Softmax": ("softmax", IN),
    "LayerNormalization": ("layernorm", OUT),
    "BatchNormalization": ("batchnorm", OUT),
    "RMSNormalization": ("rmsnorm", OUT),
    "SimplifiedLayerNormalization": ("rmsnorm", OUT),  # onnxruntime registers it in the default domain
    "LRN": ("lrn", OUT),
    "MaxPool": ("maxpool", IN),
    "AveragePool": ("avgpool", IN),
    "GlobalMaxPool": ("maxpool", IN),
    "GlobalAveragePool": ("avgpool", IN),
    "ReduceMean": ("avgpool", IN),
    "ReduceMax": ("maxpool", IN),
    "Add": ("add", OUT),
    "Sub": ("add", OUT),  # an adder with a negated operand
    "Mul": ("mul", OUT),
    "QuantizeLinear": ("quantize", OUT),
    "DequantizeLinear": ("dequantize", OUT),
}

#: onnxruntime contrib ops (domain ``com.microsoft``) that a PPU implements.
ONNX_MS_PPU: dict[str, tuple[str, str]] = {
    "Gelu": ("gelu", OUT),
    "FastGelu": ("gelu", OUT),
    "BiasGelu": ("gelu", OUT),
    "QuickGelu": ("gelu", OUT),
    "LayerNormalization": ("layernorm", OUT),
    "SkipLayerNormalization": ("layernorm", OUT),
    "SimplifiedLayerNormalization": ("rmsnorm", OUT),
    "SkipSimplifiedLayerNormalization": ("rmsnorm", OUT),
}

#: ONNX data-movement ops, recorded as layout layers named ``op_type.lower()``.
ONNX_LAYOUT = frozenset({
    "Reshape", "Flatten", "Transpose", "Concat", "Squeeze", "Unsqueeze", "Identity", "Dropout",
    "Pad", "Split", "Slice", "Gather", "Expand", "Cast", "Tile", "DepthToSpace", "SpaceToDepth",
})

#: ONNX graph plumbing, skipped (their outputs are constants).
ONNX_PLUMBING = frozenset({"Constant", "Shape", "Size", "ConstantOfShape"})

#: ONNX convolutions on the array: op -> (activation input index, weight input index).
ONNX_CONV = {"Conv": (0, 1), "ConvInteger": (0, 1), "QLinearConv": (0, 3)}
#: ONNX matmuls on the array: op -> (A input index, B input index).
ONNX_MATMUL = {"MatMul": (0, 1), "MatMulInteger": (0, 1), "QLinearMatMul": (0, 3)}

# ----------------------------------------------------------------------------- TFLite tables
#: ``enum BuiltinOperator`` of tensorflow/compiler/mlir/lite/schema/schema.fbs, in value
#: order (index == enum value, 0 .. 209).
TFLITE_BUILTINS: tuple[str, ...] = tuple("""
ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D DEPTH_TO_SPACE DEQUANTIZE
EMBEDDING_LOOKUP FLOOR FULLY_CONNECTED HASHTABLE_LOOKUP L2_NORMALIZATION L2_POOL_2D
LOCAL_RESPONSE_NORMALIZATION LOGISTIC LSH_PROJECTION LSTM MAX_POOL_2D MUL RELU RELU_N1_TO_1
RELU6 RESHAPE RESIZE_BILINEAR RNN SOFTMAX SPACE_TO_DEPTH SVDF TANH CONCAT_EMBEDDINGS SKIP_GRAM
CALL CUSTOM EMBEDDING_LOOKUP_SPARSE PAD UNIDIRECTIONAL_SEQUENCE_RNN GATHER BATCH_TO_SPACE_ND
SPACE_TO_BATCH_ND TRANSPOSE MEAN SUB DIV SQUEEZE UNIDIRECTIONAL_SEQUENCE_LSTM STRIDED_SLICE
BIDIRECTIONAL_SEQUENCE_RNN EXP TOPK_V2 SPLIT LOG_SOFTMAX DELEGATE BIDIRECTIONAL_SEQUENCE_LSTM
CAST PRELU MAXIMUM ARG_MAX MINIMUM LESS NEG PADV2 GREATER GREATER_EQUAL LESS_EQUAL SELECT
SLICE SIN TRANSPOSE_CONV SPARSE_TO_DENSE TILE EXPAND_DIMS EQUAL NOT_EQUAL LOG SUM SQRT RSQRT
SHAPE POW ARG_MIN FAKE_QUANT REDUCE_PROD REDUCE_MAX PACK LOGICAL_OR ONE_HOT LOGICAL_AND
LOGICAL_NOT UNPACK REDUCE_MIN FLOOR_DIV REDUCE_ANY SQUARE ZEROS_LIKE FILL FLOOR_MOD RANGE
RESIZE_NEAREST_NEIGHBOR LEAKY_RELU SQUARED_DIFFERENCE MIRROR_PAD ABS SPLIT_V UNIQUE CEIL
REVERSE_V2 ADD_N GATHER_ND COS WHERE RANK ELU REVERSE_SEQUENCE MATRIX_DIAG QUANTIZE
MATRIX_SET_DIAG ROUND HARD_SWISH IF WHILE NON_MAX_SUPPRESSION_V4 NON_MAX_SUPPRESSION_V5
SCATTER_ND SELECT_V2 DENSIFY SEGMENT_SUM BATCH_MATMUL PLACEHOLDER_FOR_GREATER_OP_CODES CUMSUM
CALL_ONCE BROADCAST_TO RFFT2D CONV_3D IMAG REAL COMPLEX_ABS HASHTABLE HASHTABLE_FIND
HASHTABLE_IMPORT HASHTABLE_SIZE REDUCE_ALL CONV_3D_TRANSPOSE VAR_HANDLE READ_VARIABLE
ASSIGN_VARIABLE BROADCAST_ARGS RANDOM_STANDARD_NORMAL BUCKETIZE RANDOM_UNIFORM MULTINOMIAL GELU
DYNAMIC_UPDATE_SLICE RELU_0_TO_1 UNSORTED_SEGMENT_PROD UNSORTED_SEGMENT_MAX UNSORTED_SEGMENT_SUM
ATAN2 UNSORTED_SEGMENT_MIN SIGN BITCAST BITWISE_XOR RIGHT_SHIFT STABLEHLO_LOGISTIC STABLEHLO_ADD
STABLEHLO_DIVIDE STABLEHLO_MULTIPLY STABLEHLO_MAXIMUM STABLEHLO_RESHAPE STABLEHLO_CLAMP
STABLEHLO_CONCATENATE STABLEHLO_BROADCAST_IN_DIM STABLEHLO_CONVOLUTION STABLEHLO_SLICE
STABLEHLO_CUSTOM_CALL STABLEHLO_REDUCE STABLEHLO_ABS STABLEHLO_AND STABLEHLO_COSINE
STABLEHLO_EXPONENTIAL STABLEHLO_FLOOR STABLEHLO_LOG STABLEHLO_MINIMUM STABLEHLO_NEGATE
STABLEHLO_OR STABLEHLO_POWER STABLEHLO_REMAINDER STABLEHLO_RSQRT STABLEHLO_SELECT
STABLEHLO_SUBTRACT STABLEHLO_TANH STABLEHLO_SCATTER STABLEHLO_COMPARE STABLEHLO_CONVERT
STABLEHLO_DYNAMIC_SLICE STABLEHLO_DYNAMIC_UPDATE_SLICE STABLEHLO_PAD STABLEHLO_IOTA
STABLEHLO_DOT_GENERAL STABLEHLO_REDUCE_WINDOW STABLEHLO_SORT STABLEHLO_WHILE STABLEHLO_GATHER
STABLEHLO_TRANSPOSE DILATE STABLEHLO_RNG_BIT_GENERATOR REDUCE_WINDOW STABLEHLO_COMPOSITE
STABLEHLO_SHIFT_LEFT STABLEHLO_CBRT STABLEHLO_CASE
""".split())

_B = {n: i for i, n in enumerate(TFLITE_BUILTINS)}


def tflite_code(name: str) -> int:
    """``BuiltinOperator`` value of a builtin op name."""
    return _B[name]


def tflite_name(code: int) -> str:
    return TFLITE_BUILTINS[code] if 0 <= code < len(TFLITE_BUILTINS) else f"BUILTIN_{code}"


#: TFLite builtin -> (PPU op, element basis).
TFLITE_PPU: dict[int, tuple[str, str]] = {_B[k]: v for k, v in {
    "ADD": ("add", OUT),
    "SUB": ("add", OUT),
    "MUL": ("mul", OUT),
    "AVERAGE_POOL_2D": ("avgpool", IN),
    "MAX_POOL_2D": ("maxpool", IN),
    "MEAN": ("avgpool", IN),
    "REDUCE_MAX": ("maxpool", IN),
    "SOFTMAX": ("softmax", IN),
    "LOGISTIC": ("sigmoid", OUT),
    "TANH": ("tanh", OUT),
    "RELU": ("relu", OUT),
    "RELU6": ("relu6", OUT),
    "RELU_N1_TO_1": ("clip", OUT),
    "RELU_0_TO_1": ("clip", OUT),
    "HARD_SWISH": ("hswish", OUT),
    "GELU": ("gelu", OUT),
    "LOCAL_RESPONSE_NORMALIZATION": ("lrn", OUT),
    "QUANTIZE": ("quantize", OUT),
    "DEQUANTIZE": ("dequantize", OUT),
}.items()}

#: TFLite data-movement builtins, recorded as layout layers named ``name.lower()``.
TFLITE_LAYOUT = frozenset(_B[k] for k in (
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "CONCATENATION", "PAD", "PADV2", "GATHER",
    "STRIDED_SLICE", "SLICE", "SPLIT", "SPLIT_V", "PACK", "UNPACK", "DEPTH_TO_SPACE",
    "SPACE_TO_DEPTH", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "CAST", "BROADCAST_TO", "TILE",
))

#: TFLite graph plumbing, skipped.
TFLITE_PLUMBING = frozenset(_B[k] for k in ("SHAPE", "RANK"))

#: ``enum ActivationFunctionType``: NONE=0, RELU=1, RELU_N1_TO_1=2, RELU6=3, TANH=4, SIGN_BIT=5.
TFLITE_ACTIVATION: dict[int, str | None] = {0: None, 1: "relu", 2: "clip", 3: "relu6", 4: "tanh"}


# ----------------------------------------------------------------------------- shape helpers
def same_pads(size: int, k: int, stride: int, dilation: int, lower: bool = False) -> tuple[int, int]:
    """(before, after) padding of SAME convolution: output ``ceil(size / stride)``.

    ``total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)``. TFLite and
    ONNX ``SAME_UPPER`` put ``total // 2`` before and the odd pixel after; ONNX
    ``SAME_LOWER`` puts the odd pixel before.
    """
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    small = total // 2
    return (total - small, small) if lower else (small, total - small)


def elements(shape: Sequence[int]) -> int:
    return prod(shape)


def matmul_dims(a: Sequence[int], b: Sequence[int]) -> tuple[int, int, int, int]:
    """``(batch, M, N, K)`` of ``A[..., M, K] x B[..., K, N]`` (shapes after any transpose).

    Rank-1 operands follow numpy: ``A[K]`` is one row, ``B[K]`` one column. Raises
    ``ValueError`` when the contraction dims or the batch dims do not match.
    """
    a = list(a) if len(a) > 1 else [1, *a]
    b = list(b) if len(b) > 1 else [*b, 1]
    (m, k), (k2, n) = a[-2:], b[-2:]
    if k != k2:
        raise ValueError(f"contraction dims differ: {k} vs {k2}")
    lead_a, lead_b = a[:-2], b[:-2]
    if prod(lead_b) == 1:  # a weight shared by all rows: fold A's leading dims into M
        return 1, prod(lead_a) * m, n, k
    rank = max(len(lead_a), len(lead_b))
    lead_a = [1] * (rank - len(lead_a)) + lead_a
    lead_b = [1] * (rank - len(lead_b)) + lead_b
    lead = []
    for x, y in zip(lead_a, lead_b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"batch dims {lead_a} and {lead_b} do not broadcast")
        lead.append(max(x, y))
    return prod(lead), m, n, k


# ----------------------------------------------------------------------------- collector
@dataclass
class Collector:
    """Accumulates the layers and unmapped ops of one imported model, in graph order."""

    name: str
    bits: int
    layers: list[Layer] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)

    def conv(self, name: str, batch: int, in_ch: int, out_ch: int, in_h: int, in_w: int, kh: int, kw: int,
             stride: tuple[int, int], pad: tuple[int, int, int, int], dilation: tuple[int, int],
             groups: int) -> Kernel:
        kernel = conv2d(batch, in_ch, out_ch, in_h, in_w, kh, kw, stride, pad, dilation, groups, self.bits)
        self.layers.append(Layer(name, conv_op(kernel), kernel))
        return kernel

    def gemm(self, name: str, op: str, batch: int, m: int, n: int, k: int) -> Kernel:
        if min(batch, m, n, k) <= 0:
            raise ValueError(f"empty matmul: batch={batch}, M={m}, N={n}, K={k}")
        kernel = gemm(m, n, k, batch, self.bits)
        self.layers.append(Layer(name, op, kernel))
        return kernel

    def ppu(self, name: str, op: str, count: int) -> None:
        assert op in PPU_OPS, op
        self.layers.append(Layer(name, op, None, count))

    def layout(self, name: str, op: str) -> None:
        self.layers.append(Layer(name, op, None, 0))

    def unmap(self, name: str, op: str, reason: str) -> None:
        self.unmapped.append(Unmapped(name, op, reason))

    def workload(self, source: str) -> Workload:
        return Workload(self.name, tuple(self.layers), tuple(self.unmapped), source)


def node_error(where: str, node: str, op: str, message: str) -> ConfigError:
    """``workload.path=<file>: node '<node>' (<op>): <message>`` on one line."""
    return ConfigError(f"{where}: node '{node}' ({op}): {' '.join(message.split())}")
