"""TFLite importer: ``workload=tflite workload.path=model.tflite``, read without TensorFlow.

The ``.tflite`` flatbuffer is read up front, with the ``tflite`` package's generated accessors
(:mod:`.tflite_read`); a corrupt file is a one-line :class:`ConfigError` naming it.

Semantics:

* The op of an ``OperatorCode`` is ``max(deprecated_builtin_code, builtin_code)``, as the
  TFLite runtime does (``builtin_code`` as stored: see :func:`.tflite_read.builtin_code`); ``CUSTOM`` ops
  are listed as unmapped with their ``custom_code``.
* Only subgraph 0 (the main graph) is read; control flow (IF, WHILE, CALL_ONCE) is unmapped.
* Activations are NHWC; conv filters OHWI (``groups = C_in / I``); depthwise filters
  ``[1, KH, KW, C_in * depth_multiplier]`` (``groups = C_in``). Kernels are built in the
  NCHW index order of :func:`~lego_build.analysis.kernels.conv2d`, so an equivalent ONNX
  model imports to equal ``Kernel`` objects. SAME padding follows TFLite:
  ``total = max((out-1)*stride + (k-1)*dilation + 1 - in, 0)``, ``top = total // 2``.
* A fused activation becomes a PPU layer ``<name>/<act>`` right after its op.
* FULLY_CONNECTED -> ``fc`` (M = input elements / K); BATCH_MATMUL -> ``matmul``
  (``adj_x``/``adj_y`` honoured); MEAN -> ``avgpool`` (global pool), REDUCE_MAX -> ``maxpool``,
  SUM -> ``avgpool`` too (the same reduction without the ``1/N`` scale, which folds into the
  requantisation; e.g. a PyTorch ``x.sum((2, 3))`` head).
* A PAD with constant paddings on H/W only, read only by convolutions, is folded into
  their padding (and stays listed as a ``pad`` layout layer).
* Batch: TFLite shapes are concrete; where ``shape_signature[0] == -1`` (dynamic batch)
  dim 0 becomes the configured ``batch``; a ``batch`` other than 1 for a model without a
  dynamic batch is refused (its shapes are fixed).
* Layout ops are listed with ``elements=0`` under their lowercase builtin name; SHAPE and
  RANK, and known ops whose inputs are all constants (DEQUANTIZE of fp16 weights, DENSIFY
  of sparse weights, shape arithmetic), are skipped as plumbing; everything else goes to
  ``Workload.unmapped``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lego_build.analysis.importers.common import (
    IN,
    TFLITE_ACTIVATION,
    TFLITE_LAYOUT,
    TFLITE_PLUMBING,
    TFLITE_PPU,
    Collector,
    Importer,
    SettingError,
    elements,
    matmul_dims,
    node_error,
    same_pads,
    tflite_code,
    tflite_name,
)
from lego_build.analysis.importers.tflite_read import Model, Operator, options_union, read_model
from lego_build.errors import ConfigError
from lego_build.ir.workload import Workload

_CONV, _DWCONV = tflite_code("CONV_2D"), tflite_code("DEPTHWISE_CONV_2D")
_FC, _BMM, _PAD = tflite_code("FULLY_CONNECTED"), tflite_code("BATCH_MATMUL"), tflite_code("PAD")
_CUSTOM = tflite_code("CUSTOM")
_UNSUPPORTED_ARRAY = {
    tflite_code("TRANSPOSE_CONV"): "transposed convolution is not supported",
    tflite_code("CONV_3D"): "3-D convolution is not supported",
    tflite_code("CONV_3D_TRANSPOSE"): "3-D transposed convolution is not supported",
}
#: PPU ops of builtins beyond the shared table (:data:`.common.TFLITE_PPU`).
_PPU = {**TFLITE_PPU, tflite_code("SUM"): ("avgpool", IN)}
#: Builtins that only ever run on constants here (sparse weights expanded before inference):
#: skipped when all their inputs are constant, unmapped otherwise.
_CONSTANT_ONLY = frozenset({tflite_code("DENSIFY")})
_TENSOR_INT32, _TENSOR_INT64 = 2, 4
_SAME, _VALID = 0, 1


# ----------------------------------------------------------------------------- importing
def load(path: Path, name: str, batch: int, bits: int) -> Workload:
    where = f"workload.path={path}"
    model = read_model(path, where)
    if batch != 1 and not any(t.shape and len(t.signature) == len(t.shape) and t.signature[0] == -1
                              for t in model.tensors):
        raise SettingError(f"workload.batch={batch}: {where} has no dynamic batch (its shapes are fixed); "
                           "use workload.batch=1, or convert the model with the batch you want")
    return _Importer(model, where, name, bits, batch).run(f"tflite:{path}")


class _Importer:
    def __init__(self, model: Model, where: str, name: str, bits: int, batch: int) -> None:
        self.m = model
        self.where = where
        self.out = Collector(name, bits)
        self.shapes: list[tuple[int, ...]] = []
        for t in model.tensors:
            shape = t.shape
            if shape and len(t.signature) == len(shape) and t.signature[0] == -1:
                shape = (batch, *shape[1:])
            self.shapes.append(shape)
        self.const = {i for i, t in enumerate(model.tensors) if model.buffers and model.buffers[t.buffer] is not None}
        self.consumers: dict[int, list[tuple[int, int]]] = {}
        for op in model.operators:
            for pos, t in enumerate(op.inputs):
                self.consumers.setdefault(t, []).append((op.code, pos))
        self.folded: dict[int, tuple[int, tuple[int, int, int, int]]] = {}

    def run(self, source: str) -> Workload:
        for idx, op in enumerate(self.m.operators):
            self.operator(op, self.label(op, idx))
        return self.out.workload(source)

    def label(self, op: Operator, idx: int) -> str:
        if op.outputs and op.outputs[0] >= 0:
            name = self.m.tensors[op.outputs[0]].name.split(";")[0]
            if name:
                return name
        return f"{tflite_name(op.code).lower()}_{idx}"

    def err(self, label: str, op: Operator, message: str) -> ConfigError:
        return node_error(self.where, label, tflite_name(op.code), message)

    def operator(self, op: Operator, label: str) -> None:
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
        expected = options_union()[1].get(code)
        if expected is not None and op.options_type not in (0, expected[0]):
            raise self.err(label, op, f"builtin_options is {op.options_type}, expected {expected[1]} ({expected[0]})")
        if code in (_CONV, _DWCONV):
            self.conv(op, label, depthwise=code == _DWCONV)
        elif code == _FC:
            self.fc(op, label)
        elif code == _BMM:
            self.matmul(op, label)
        elif code in _PPU or code in TFLITE_LAYOUT or code in _CONSTANT_ONLY:
            inputs = [i for i in op.inputs if i >= 0]
            if inputs and all(i in self.const for i in inputs):  # constant-folded plumbing
                self.const.update(op.outputs)
                return
            if code in _CONSTANT_ONLY:
                self.out.unmap(label, name, f"TFLite op {name} on a non-constant input: no array or PPU implementation")
                return
            if code in _PPU:
                ppu, basis = _PPU[code]
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

    def fused(self, op: Operator, label: str) -> None:
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
    def tensor_in(self, op: Operator, label: str, pos: int, what: str) -> int:
        if len(op.inputs) <= pos or op.inputs[pos] < 0:
            raise self.err(label, op, f"missing {what} input")
        return op.inputs[pos]

    def tensor_out(self, op: Operator, label: str) -> int:
        if not op.outputs or op.outputs[0] < 0:
            raise self.err(label, op, "missing output")
        return op.outputs[0]

    def conv(self, op: Operator, label: str, depthwise: bool) -> None:
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

    def fc(self, op: Operator, label: str) -> None:
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

    def matmul(self, op: Operator, label: str) -> None:
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

    def array_gemm(self, op: Operator, label: str, kind: str, batch: int, m: int, n: int, k: int) -> None:
        try:
            self.out.gemm(label, kind, batch, m, n, k)
        except ValueError as exc:
            raise self.err(label, op, str(exc)) from None

    # --------------------------------------------------------------- PAD folding
    def constant_ints(self, tensor: int) -> list[int] | None:
        t = self.m.tensors[tensor]
        if tensor not in self.const or t.buffer >= len(self.m.buffers):
            return None
        data = self.m.buffers[t.buffer]
        dtype = {_TENSOR_INT32: "<i4", _TENSOR_INT64: "<i8"}.get(t.type)
        if data is None or dtype is None or len(data) != elements(t.shape) * np.dtype(dtype).itemsize:
            return None
        return [int(v) for v in np.frombuffer(data, dtype=dtype)]

    def try_fold_pad(self, op: Operator) -> None:
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
