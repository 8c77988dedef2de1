"""TFLite importer: ``workload=tflite workload.path=model.tflite``, read without TensorFlow.

The ``.tflite`` flatbuffer is walked with the ``flatbuffers`` runtime
(:class:`flatbuffers.table.Table` for vtable lookups) and hand-written accessors that
bounds-check every offset, so a truncated or corrupt file raises :class:`ConfigError`
instead of reading garbage.

Schema: ``tensorflow/compiler/mlir/lite/schema/schema.fbs`` of tensorflow/tensorflow
(the file that ``tensorflow/lite/schema/schema.fbs`` mirrors; ``file_identifier "TFL3"``).
A table field's slot is its position in the table declaration (vtable entry
``4 + 2 * slot``); a union field takes two slots, the ``_type`` byte then the value.
Slots used here::

    Model          version 0, operator_codes 1, subgraphs 2, description 3, buffers 4
    OperatorCode   deprecated_builtin_code 0 (byte), custom_code 1, version 2, builtin_code 3 (int)
    SubGraph       tensors 0, inputs 1, outputs 2, operators 3, name 4
    Tensor         shape 0, type 1, buffer 2, name 3, quantization 4, is_variable 5,
                   sparsity 6, shape_signature 7
    Operator       opcode_index 0, inputs 1, outputs 2, builtin_options_type 3,
                   builtin_options 4, custom_options 5
    Buffer         data 0, offset 1, size 2
    Conv2DOptions           padding 0, stride_w 1, stride_h 2, fused_activation_function 3,
                            dilation_w_factor 4 (=1), dilation_h_factor 5 (=1)
    DepthwiseConv2DOptions  padding 0, stride_w 1, stride_h 2, depth_multiplier 3,
                            fused_activation_function 4, dilation_w_factor 5, dilation_h_factor 6
    Pool2DOptions           padding 0, stride_w 1, stride_h 2, filter_width 3, filter_height 4,
                            fused_activation_function 5
    FullyConnectedOptions   fused_activation_function 0, weights_format 1, keep_num_dims 2
    Add/Sub/Mul/DivOptions  fused_activation_function 0;  ConcatenationOptions axis 0, fused 1
    BatchMatMulOptions      adj_x 0, adj_y 1

Enums: ``BuiltinOperator`` (:data:`.common.TFLITE_BUILTINS`), ``BuiltinOptions`` union
(Conv2DOptions 1, DepthwiseConv2DOptions 2, Pool2DOptions 5, FullyConnectedOptions 8,
SoftmaxOptions 9, ConcatenationOptions 10, AddOptions 11, ReshapeOptions 17, MulOptions 21,
ReducerOptions 27, SubOptions 28, DivOptions 29, BatchMatMulOptions 101), ``Padding``
(SAME 0, VALID 1), ``ActivationFunctionType`` (NONE 0, RELU 1, RELU_N1_TO_1 2, RELU6 3,
TANH 4, SIGN_BIT 5), ``TensorType`` (INT32 2, INT64 4).

Semantics:

* The op of an ``OperatorCode`` is ``max(deprecated_builtin_code, builtin_code)``, as the
  TFLite runtime does; ``CUSTOM`` ops are listed as unmapped with their ``custom_code``.
* Only subgraph 0 (the main graph) is read; control flow (IF, WHILE, CALL_ONCE) is unmapped.
* Activations are NHWC; conv filters OHWI (``groups = C_in / I``); depthwise filters
  ``[1, KH, KW, C_in * depth_multiplier]`` (``groups = C_in``). Kernels are built in the
  NCHW index order of :func:`~lego_build.analysis.kernels.conv2d`, so an equivalent ONNX
  model imports to equal ``Kernel`` objects. SAME padding follows TFLite:
  ``total = max((out-1)*stride + (k-1)*dilation + 1 - in, 0)``, ``top = total // 2``.
* A fused activation becomes a PPU layer ``<name>/<act>`` right after its op.
* FULLY_CONNECTED -> ``fc`` (M = input elements / K); BATCH_MATMUL -> ``matmul``
  (``adj_x``/``adj_y`` honoured); MEAN -> ``avgpool`` (global pool), REDUCE_MAX -> ``maxpool``.
* A PAD with constant paddings on H/W only, read only by convolutions, is folded into
  their padding (and stays listed as a ``pad`` layout layer).
* Batch: TFLite shapes are concrete; where ``shape_signature[0] == -1`` (dynamic batch)
  dim 0 becomes the configured ``batch``, otherwise the model's own batch is used.
* Layout ops are listed with ``elements=0`` under their lowercase builtin name; SHAPE and
  RANK, and known ops whose inputs are all constants (e.g. DEQUANTIZE of fp16 weights),
  are skipped as plumbing; everything else goes to ``Workload.unmapped``.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flatbuffers import number_types as N
from flatbuffers.table import Table

from lego_build.analysis.importers.common import (
    IN,
    TFLITE_ACTIVATION,
    TFLITE_LAYOUT,
    TFLITE_PLUMBING,
    TFLITE_PPU,
    Collector,
    Importer,
    elements,
    matmul_dims,
    node_error,
    same_pads,
    tflite_code,
    tflite_name,
)
from lego_build.errors import ConfigError
from lego_build.ir.workload import Workload

FILE_IDENTIFIER = b"TFL3"

# ``BuiltinOptions`` union values and the fields read from each table: name -> (slot, flags, default).
_I8, _I32, _BOOL = N.Int8Flags, N.Int32Flags, N.BoolFlags
OPTIONS: dict[int, tuple[str, dict[str, tuple[int, Any, Any]]]] = {
    1: ("Conv2DOptions", {"padding": (0, _I8, 0), "stride_w": (1, _I32, 0), "stride_h": (2, _I32, 0),
                          "fused_activation_function": (3, _I8, 0), "dilation_w_factor": (4, _I32, 1),
                          "dilation_h_factor": (5, _I32, 1)}),
    2: ("DepthwiseConv2DOptions", {"padding": (0, _I8, 0), "stride_w": (1, _I32, 0), "stride_h": (2, _I32, 0),
                                   "depth_multiplier": (3, _I32, 0), "fused_activation_function": (4, _I8, 0),
                                   "dilation_w_factor": (5, _I32, 1), "dilation_h_factor": (6, _I32, 1)}),
    5: ("Pool2DOptions", {"padding": (0, _I8, 0), "stride_w": (1, _I32, 0), "stride_h": (2, _I32, 0),
                          "filter_width": (3, _I32, 0), "filter_height": (4, _I32, 0),
                          "fused_activation_function": (5, _I8, 0)}),
    8: ("FullyConnectedOptions", {"fused_activation_function": (0, _I8, 0), "weights_format": (1, _I8, 0),
                                  "keep_num_dims": (2, _BOOL, False)}),
    9: ("SoftmaxOptions", {}),
    10: ("ConcatenationOptions", {"axis": (0, _I32, 0), "fused_activation_function": (1, _I8, 0)}),
    11: ("AddOptions", {"fused_activation_function": (0, _I8, 0)}),
    17: ("ReshapeOptions", {}),
    21: ("MulOptions", {"fused_activation_function": (0, _I8, 0)}),
    27: ("ReducerOptions", {"keep_dims": (0, _BOOL, False)}),
    28: ("SubOptions", {"fused_activation_function": (0, _I8, 0)}),
    29: ("DivOptions", {"fused_activation_function": (0, _I8, 0)}),
    101: ("BatchMatMulOptions", {"adj_x": (0, _BOOL, False), "adj_y": (1, _BOOL, False)}),
}

#: Options union type each handled builtin carries.
_EXPECTED = {
    "CONV_2D": 1, "DEPTHWISE_CONV_2D": 2, "AVERAGE_POOL_2D": 5, "MAX_POOL_2D": 5, "FULLY_CONNECTED": 8,
    "SOFTMAX": 9, "CONCATENATION": 10, "ADD": 11, "MUL": 21, "MEAN": 27, "REDUCE_MAX": 27, "SUB": 28,
    "DIV": 29, "BATCH_MATMUL": 101,
}
_EXPECTED_BY_CODE = {tflite_code(k): v for k, v in _EXPECTED.items()}

_CONV, _DWCONV = tflite_code("CONV_2D"), tflite_code("DEPTHWISE_CONV_2D")
_FC, _BMM, _PAD = tflite_code("FULLY_CONNECTED"), tflite_code("BATCH_MATMUL"), tflite_code("PAD")
_CUSTOM = tflite_code("CUSTOM")
_UNSUPPORTED_ARRAY = {
    tflite_code("TRANSPOSE_CONV"): "transposed convolution is not supported",
    tflite_code("CONV_3D"): "3-D convolution is not supported",
    tflite_code("CONV_3D_TRANSPOSE"): "3-D transposed convolution is not supported",
}
_TENSOR_INT32, _TENSOR_INT64 = 2, 4
_SAME, _VALID = 0, 1


# ----------------------------------------------------------------------------- flatbuffer reading
class _Corrupt(Exception):
    """An offset or length that points outside the buffer."""


class _Reader:
    """Bounds-checked accessors over :class:`flatbuffers.table.Table`."""

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.n = len(buf)

    def _need(self, pos: int, size: int) -> None:
        if pos < 0 or pos + size > self.n:
            raise _Corrupt(f"offset {pos}+{size} outside the {self.n}-byte file")

    def u32(self, pos: int) -> int:
        self._need(pos, 4)
        return struct.unpack_from("<I", self.buf, pos)[0]

    def table(self, pos: int) -> Table:
        self._need(pos, 4)
        vtable = pos - struct.unpack_from("<i", self.buf, pos)[0]
        self._need(vtable, 4)
        vt_len, obj_len = struct.unpack_from("<HH", self.buf, vtable)
        if vt_len < 4 or vt_len % 2:
            raise _Corrupt(f"vtable at {vtable} has length {vt_len}")
        self._need(vtable, vt_len)
        self._need(pos, obj_len)
        return Table(self.buf, pos)

    def root(self) -> Table:
        return self.table(self.u32(0))

    def field(self, t: Table, slot: int) -> int:
        off = t.Offset(4 + 2 * slot)
        return t.Pos + off if off else 0

    def scalar(self, t: Table, slot: int, flags: Any, default: Any) -> Any:
        pos = self.field(t, slot)
        if not pos:
            return default
        self._need(pos, flags.bytewidth)
        return t.Get(flags, pos)

    def _vector(self, t: Table, slot: int, elem_size: int) -> tuple[int, int]:
        pos = self.field(t, slot)
        if not pos:
            return 0, 0
        vec = pos + self.u32(pos)
        length = self.u32(vec)
        self._need(vec + 4, length * elem_size)
        return vec + 4, length

    def ints(self, t: Table, slot: int) -> tuple[int, ...]:
        start, length = self._vector(t, slot, 4)
        return struct.unpack_from(f"<{length}i", self.buf, start) if length else ()

    def bytes_span(self, t: Table, slot: int) -> tuple[int, int]:
        return self._vector(t, slot, 1)

    def string(self, t: Table, slot: int) -> str:
        start, length = self._vector(t, slot, 1)
        return self.buf[start:start + length].decode("utf-8", errors="replace")

    def tables(self, t: Table, slot: int) -> list[Table]:
        start, length = self._vector(t, slot, 4)
        return [self.table(start + 4 * i + self.u32(start + 4 * i)) for i in range(length)]

    def subtable(self, t: Table, slot: int) -> Table | None:
        pos = self.field(t, slot)
        return self.table(pos + self.u32(pos)) if pos else None


@dataclass
class _Tensor:
    name: str
    shape: tuple[int, ...]
    type: int
    buffer: int
    signature: tuple[int, ...] = ()


@dataclass
class _Operator:
    code: int
    custom: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options_type: int
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Model:
    tensors: list[_Tensor]
    operators: list[_Operator]
    outputs: tuple[int, ...]
    buffers: list[tuple[int, int, bool]]  # (data start, data length, has data)
    raw: bytes


def _parse(buf: bytes) -> _Model:
    r = _Reader(buf)
    model = r.root()
    codes = []
    for oc in r.tables(model, 1):
        deprecated = r.scalar(oc, 0, N.Int8Flags, 0)
        builtin = r.scalar(oc, 3, N.Int32Flags, 0)
        codes.append((max(deprecated, builtin), r.string(oc, 1)))
    buffers = []
    for b in r.tables(model, 4):
        start, length = r.bytes_span(b, 0)
        offset = r.scalar(b, 1, N.Uint64Flags, 0)
        buffers.append((start, length, length > 0 or offset > 1))
    subgraphs = r.tables(model, 2)
    if not subgraphs:
        raise _Corrupt("the model has no subgraphs")
    sg = subgraphs[0]
    tensors = [
        _Tensor(r.string(t, 3), tuple(r.ints(t, 0)), r.scalar(t, 1, N.Int8Flags, 0), r.scalar(t, 2, N.Uint32Flags, 0),
                tuple(r.ints(t, 7)))
        for t in r.tables(sg, 0)
    ]
    operators = []
    for op in r.tables(sg, 3):
        index = r.scalar(op, 0, N.Uint32Flags, 0)
        if index >= len(codes):
            raise _Corrupt(f"opcode_index {index} but only {len(codes)} operator codes")
        code, custom = codes[index]
        inputs, outputs = tuple(r.ints(op, 1)), tuple(r.ints(op, 2))
        for t in (*inputs, *outputs):
            if not -1 <= t < len(tensors):
                raise _Corrupt(f"tensor index {t} but only {len(tensors)} tensors")
        otype = r.scalar(op, 3, N.Uint8Flags, 0)
        options: dict[str, Any] = {}
        table = r.subtable(op, 4) if otype else None
        if table is not None and otype in OPTIONS:
            for key, (slot, flags, default) in OPTIONS[otype][1].items():
                options[key] = r.scalar(table, slot, flags, default)
        operators.append(_Operator(code, custom, inputs, outputs, otype, options))
    for t in tensors:
        if t.buffer >= max(len(buffers), 1):
            raise _Corrupt(f"tensor '{t.name}' refers to buffer {t.buffer} but only {len(buffers)} buffers")
    return _Model(tensors, operators, tuple(r.ints(sg, 2)), buffers, buf)


def read_model(path: Path, where: str) -> _Model:
    """Parse the flatbuffer; any structural problem is a one-line :class:`ConfigError`."""
    if not path.is_file():
        raise ConfigError(f"{where}: no such tflite file")
    try:
        buf = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the file ({exc.strerror or exc})") from None
    if len(buf) < 8:
        raise ConfigError(f"{where}: not a TFLite model (only {len(buf)} bytes)")
    ident = bytes(buf[4:8])
    if ident != FILE_IDENTIFIER:
        raise ConfigError(f"{where}: not a TFLite model (file identifier {ident!r}, expected {FILE_IDENTIFIER!r})")
    try:
        return _parse(buf)
    except (_Corrupt, struct.error, IndexError, OverflowError, UnicodeDecodeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(f"{where}: not a valid TFLite model (corrupt flatbuffer: {reason})") from None


# ----------------------------------------------------------------------------- importing
def load(path: Path, name: str, batch: int, bits: int) -> Workload:
    where = f"workload.path={path}"
    return _Importer(read_model(path, where), where, name, bits, batch).run(f"tflite:{path}")


class _Importer:
    def __init__(self, model: _Model, where: str, name: str, bits: int, batch: int) -> None:
        self.m = model
        self.where = where
        self.out = Collector(name, bits)
        self.shapes: list[tuple[int, ...]] = []
        for t in model.tensors:
            shape = t.shape
            if shape and len(t.signature) == len(shape) and t.signature[0] == -1:
                shape = (batch, *shape[1:])
            self.shapes.append(shape)
        self.const = {i for i, t in enumerate(model.tensors) if model.buffers and model.buffers[t.buffer][2]}
        self.consumers: dict[int, list[tuple[int, int]]] = {}
        for op in model.operators:
            for pos, t in enumerate(op.inputs):
                self.consumers.setdefault(t, []).append((op.code, pos))
        self.folded: dict[int, tuple[int, tuple[int, int, int, int]]] = {}

    def run(self, source: str) -> Workload:
        for idx, op in enumerate(self.m.operators):
            self.operator(op, self.label(op, idx))
        return self.out.workload(source)

    def label(self, op: _Operator, idx: int) -> str:
        if op.outputs and op.outputs[0] >= 0:
            name = self.m.tensors[op.outputs[0]].name.split(";")[0]
            if name:
                return name
        return f"{tflite_name(op.code).lower()}_{idx}"

    def err(self, label: str, op: _Operator, message: str) -> ConfigError:
        return node_error(self.where, label, tflite_name(op.code), message)

    def operator(self, op: _Operator, label: str) -> None:
        code = op.code
        name = tflite_name(code)
        if code == _CUSTOM:
            self.out.unmap(label, op.custom or "CUSTOM",
                           f"custom TFLite op '{op.custom}': no array or PPU implementation")
            return
        if code in TFLITE_PLUMBING:
            self.const.update(op.outputs)
            return
        if code in _UNSUPPORTED_ARRAY:
            raise self.err(label, op, _UNSUPPORTED_ARRAY[code])
        expected = _EXPECTED_BY_CODE.get(code)
        if expected is not None and op.options_type not in (0, expected):
            raise self.err(label, op, f"builtin_options is {op.options_type}, expected {OPTIONS[expected][0]} "
                                      f"({expected})")
        if code in (_CONV, _DWCONV):
            self.conv(op, label, depthwise=code == _DWCONV)
        elif code == _FC:
            self.fc(op, label)
        elif code == _BMM:
            self.matmul(op, label)
        elif code in TFLITE_PPU or code in TFLITE_LAYOUT:
            inputs = [i for i in op.inputs if i >= 0]
            if inputs and all(i in self.const for i in inputs):  # constant-folded plumbing
                self.const.update(op.outputs)
                return
            if code in TFLITE_PPU:
                ppu, basis = TFLITE_PPU[code]
                tensor = self.tensor_in(op, label, 0, "data") if basis == IN else self.tensor_out(op, label)
                self.out.ppu(label, ppu, elements(self.shapes[tensor]))
            else:
                if code == _PAD:
                    self.try_fold_pad(op)
                self.out.layout(label, name.lower())
        else:
            self.out.unmap(label, name, f"no array or PPU implementation for TFLite op {name}")
            return
        self.fused(op, label)

    def fused(self, op: _Operator, label: str) -> None:
        act = op.options.get("fused_activation_function", 0)
        if not act:
            return
        ppu = TFLITE_ACTIVATION.get(act)
        if ppu is None:
            self.out.unmap(f"{label}/activation", f"fused activation {act}",
                           "no PPU implementation for this fused activation (SIGN_BIT or unknown)")
            return
        self.out.ppu(f"{label}/{ppu}", ppu, elements(self.shapes[self.tensor_out(op, label)]))

    # --------------------------------------------------------------- array ops
    def tensor_in(self, op: _Operator, label: str, pos: int, what: str) -> int:
        if len(op.inputs) <= pos or op.inputs[pos] < 0:
            raise self.err(label, op, f"missing {what} input")
        return op.inputs[pos]

    def tensor_out(self, op: _Operator, label: str) -> int:
        if not op.outputs or op.outputs[0] < 0:
            raise self.err(label, op, "missing output")
        return op.outputs[0]

    def conv(self, op: _Operator, label: str, depthwise: bool) -> None:
        if not op.options:
            raise self.err(label, op, "missing builtin_options")
        o = op.options
        x = self.tensor_in(op, label, 0, "activation")
        w = self.tensor_in(op, label, 1, "filter")
        xs, ws = self.shapes[x], self.shapes[w]
        if len(xs) != 4:
            raise self.err(label, op, f"input shape {list(xs)} is not NHWC")
        if len(ws) != 4:
            raise self.err(label, op, f"filter shape {list(ws)} is not 4-D")
        if w not in self.const:
            raise self.err(label, op, "filter is not constant (dynamic weights are not supported)")
        if min(*xs, *ws) <= 0:
            raise self.err(label, op, f"input {list(xs)} or filter {list(ws)} has an empty or unknown dim")
        n, h, wd, c = xs
        if depthwise:
            one, kh, kw, out_ch = ws
            if one != 1 or out_ch % c:
                raise self.err(label, op, f"depthwise filter {list(ws)} does not fit {c} input channels")
            groups = c
        else:
            out_ch, kh, kw, ic = ws
            if c % ic or out_ch % (c // ic):
                raise self.err(label, op, f"filter {list(ws)} does not fit {c} input channels")
            groups = c // ic
        sh, sw = o["stride_h"], o["stride_w"]
        dh, dw = o["dilation_h_factor"], o["dilation_w_factor"]
        if min(sh, sw, dh, dw) <= 0:
            raise self.err(label, op, f"stride ({sh}, {sw}) and dilation ({dh}, {dw}) must be positive")
        if o["padding"] == _SAME:
            pt, pb = same_pads(h, kh, sh, dh)
            pl, pr = same_pads(wd, kw, sw, dw)
        elif o["padding"] == _VALID:
            pt = pl = pb = pr = 0
        else:
            raise self.err(label, op, f"unknown padding {o['padding']}")
        if x in self.folded:
            src, (ft, fl, fb, fr) = self.folded[x]
            n, h, wd, c = self.shapes[src]
            pt, pl, pb, pr = pt + ft, pl + fl, pb + fb, pr + fr
        try:
            kernel = self.out.conv(label, n, c, out_ch, h, wd, kh, kw, (sh, sw), (pt, pl, pb, pr), (dh, dw), groups)
        except ValueError as exc:
            raise self.err(label, op, str(exc)) from None
        ys = self.shapes[self.tensor_out(op, label)]
        expect = tuple(kernel.output.shape[i] for i in (2, 3, 1))
        if len(ys) == 4 and tuple(ys[1:]) != expect:
            raise self.err(label, op, f"output tensor shape {list(ys)} does not match the computed "
                                      f"[{n}, {expect[0]}, {expect[1]}, {expect[2]}]")

    def fc(self, op: _Operator, label: str) -> None:
        x = self.tensor_in(op, label, 0, "activation")
        w = self.tensor_in(op, label, 1, "weights")
        xs, ws = self.shapes[x], self.shapes[w]
        if len(ws) != 2:
            raise self.err(label, op, f"weights shape {list(ws)} is not [out, in]")
        n, k = ws
        total = elements(xs)
        if k <= 0 or total % k:
            raise self.err(label, op, f"input shape {list(xs)} is not a multiple of {k} input features")
        self.array_gemm(op, label, "fc" if w in self.const else "matmul", 1, total // k, n, k)

    def matmul(self, op: _Operator, label: str) -> None:
        a = list(self.shapes[self.tensor_in(op, label, 0, "x")])
        b = list(self.shapes[self.tensor_in(op, label, 1, "y")])
        if len(a) < 2 or len(b) < 2:
            raise self.err(label, op, f"operands must be at least 2-D, got {a} and {b}")
        if op.options.get("adj_x"):
            a[-2], a[-1] = a[-1], a[-2]
        if op.options.get("adj_y"):
            b[-2], b[-1] = b[-1], b[-2]
        try:
            batch, m, n, k = matmul_dims(a, b)
        except ValueError as exc:
            raise self.err(label, op, f"{exc} (x {a}, y {b})") from None
        self.array_gemm(op, label, "matmul", batch, m, n, k)

    def array_gemm(self, op: _Operator, label: str, kind: str, batch: int, m: int, n: int, k: int) -> None:
        try:
            self.out.gemm(label, kind, batch, m, n, k)
        except ValueError as exc:
            raise self.err(label, op, str(exc)) from None

    # --------------------------------------------------------------- PAD folding
    def constant_ints(self, tensor: int) -> list[int] | None:
        t = self.m.tensors[tensor]
        if tensor not in self.const or t.buffer >= len(self.m.buffers):
            return None
        start, length, _ = self.m.buffers[t.buffer]
        size = {_TENSOR_INT32: 4, _TENSOR_INT64: 8}.get(t.type)
        if size is None or length != elements(t.shape) * size:
            return None
        fmt = "i" if size == 4 else "q"
        return list(struct.unpack_from(f"<{length // size}{fmt}", self.m.raw, start))

    def try_fold_pad(self, op: _Operator) -> None:
        if len(op.inputs) < 2 or not op.outputs:
            return
        src, out = op.inputs[0], op.outputs[0]
        pads = self.constant_ints(op.inputs[1])
        if pads is None or len(pads) != 8 or any(p < 0 for p in pads) or any(pads[i] for i in (0, 1, 6, 7)):
            return
        if out in self.m.outputs or len(self.shapes[src]) != 4 or not self.consumers.get(out):
            return
        if not all(code in (_CONV, _DWCONV) and pos == 0 for code, pos in self.consumers[out]):
            return
        self.folded[out] = (src, (pads[2], pads[4], pads[3], pads[5]))


IMPORTER = Importer("tflite", load, "give a .tflite flatbuffer (e.g. from tf.lite.TFLiteConverter)")
