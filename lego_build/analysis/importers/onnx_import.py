"""ONNX importer: ``workload=onnx workload.path=model.onnx``.

Reading (:mod:`.onnx_read`): the file without external data, the checker, the symbolic dims'
values, then ``onnx.shape_inference.infer_shapes(data_prop=True)``; shapes are read from the
graph inputs/outputs, ``value_info`` and initializer dims.

Operators (op tables in :mod:`.common`), in graph order:

* ``Conv`` / ``ConvInteger`` / ``QLinearConv`` -> ``conv2d`` / ``depthwise`` /
  ``group_conv`` with ``pads`` / ``strides`` / ``dilations`` / ``group`` /
  ``kernel_shape`` / ``auto_pad`` (SAME_UPPER, SAME_LOWER, VALID). 1-D convolutions run as
  ``H = 1``. A zero, constant-mode ``Pad`` on H/W whose only consumers are convolutions is
  folded into their padding (the Pad stays listed as a layout layer).
* ``Gemm`` -> ``fc`` (``transA``/``transB`` honoured; ``matmul`` when B is not constant);
  ``MatMul`` / ``MatMulInteger`` / ``QLinearMatMul`` -> ``matmul`` (see
  :func:`.common.matmul_dims`: leading dims fold into M when B is a plain 2-D matrix,
  otherwise they form the batch).
* PPU ops with element counts; ``Clip`` is ``relu6`` for bounds (0, 6), ``relu`` for
  (0, none) and ``clip`` otherwise; the variadic ``Sum`` of k terms is k - 1 adds per
  output element.
* Layout ops (Reshape, Flatten, Transpose, Concat, Squeeze, Unsqueeze, Identity, Dropout,
  Pad, Split, Slice, Gather, Expand, Cast, Tile, DepthToSpace, SpaceToDepth) are listed as
  ``Layer(op=op_type.lower(), elements=0)``.
* Plumbing is skipped: Constant, Shape, Size, ConstantOfShape, and any known non-array op
  all of whose inputs are constants (shape arithmetic, weight DequantizeLinear).
* Anything else -- unknown default-domain ops, custom domains, control flow (If, Loop,
  Scan: their bodies are not analysed) -- goes to ``Workload.unmapped``. A PPU op whose
  element count shape inference cannot determine is also listed there.

Errors (one-line :class:`ConfigError` naming the file and the node): unreadable or
invalid model, an array op whose shapes are unknown after shape inference, 3-D
convolution, ConvTranspose, non-constant convolution weights, inconsistent shapes.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from lego_build.analysis.importers.common import (
    IN,
    ONNX_CONV,
    ONNX_LAYOUT,
    ONNX_MATMUL,
    ONNX_MS_PPU,
    ONNX_PLUMBING,
    ONNX_PPU,
    Collector,
    Importer,
    elements,
    matmul_dims,
    node_error,
    same_pads,
)
from lego_build.analysis.importers.onnx_read import check_model, one_line, onnx_module, read_model, set_symbols
from lego_build.errors import ConfigError
from lego_build.ir.workload import Workload

Shape = tuple  # tuple[int | None, ...]
_UNKNOWN = object()


def load(path: Path, name: str, batch: int, bits: int, symbols: dict[str, int] | None = None) -> Workload:
    where = f"workload.path={path}"
    onnx = onnx_module()
    model = read_model(onnx, path, where)
    check_model(onnx, model, where)
    notes = set_symbols(model, dict(symbols or {}), batch, where)
    try:
        model = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception as exc:  # noqa: BLE001 - any inference failure is a model problem
        raise ConfigError(f"{where}: ONNX shape inference failed ({one_line(exc)})") from None
    return replace(_Importer(onnx, model, where, name, bits).run(f"onnx:{path}"), notes=notes)


# ----------------------------------------------------------------------------- importing
class _Importer:
    def __init__(self, onnx: Any, model: Any, where: str, name: str, bits: int) -> None:
        self.onnx = onnx
        self.graph = model.graph
        self.where = where
        self.out = Collector(name, bits)
        self.shapes: dict[str, Shape | None] = {}
        for value in (*self.graph.input, *self.graph.output, *self.graph.value_info):
            self.shapes[value.name] = _shape_of(value)
        self.inits = {t.name: t for t in self.graph.initializer}
        for t in self.graph.initializer:
            self.shapes[t.name] = tuple(int(d) for d in t.dims)
        self.const: set[str] = set(self.inits)
        self.values: dict[str, Any] = {}  # Constant node outputs (numpy arrays)
        self.consumers: dict[str, list[tuple[Any, int]]] = defaultdict(list)
        for node in self.graph.node:
            for idx, tensor in enumerate(node.input):
                self.consumers[tensor].append((node, idx))
        self.outputs = {v.name for v in self.graph.output}
        self.folded: dict[str, tuple[str, tuple[int, int, int, int]]] = {}

    # --------------------------------------------------------------- lookups
    def shape(self, tensor: str) -> Shape | None:
        return self.shapes.get(tensor)

    def known(self, tensor: str) -> tuple[int, ...] | None:
        shape = self.shape(tensor)
        if shape is None or any(d is None for d in shape):
            return None
        return shape

    def value(self, tensor: str):
        """The constant's numpy value when it is available in the file, else ``None``."""
        if tensor in self.values:
            return self.values[tensor]
        init = self.inits.get(tensor)
        if init is None or init.data_location == self.onnx.TensorProto.EXTERNAL:
            return None
        try:
            return self.onnx.numpy_helper.to_array(init)
        except Exception:  # noqa: BLE001 - malformed initializer: treat as unknown
            return None

    @staticmethod
    def attrs(node: Any) -> dict[str, Any]:
        from onnx import helper

        return {a.name: helper.get_attribute_value(a) for a in node.attribute}

    # --------------------------------------------------------------- main loop
    def run(self, source: str) -> Workload:
        for idx, node in enumerate(self.graph.node):
            label = node.name or f"{node.op_type}_{idx}"
            self.node(node, label)
        return self.out.workload(source)

    def node(self, node: Any, label: str) -> None:
        op, domain = node.op_type, node.domain
        if domain not in ("", "ai.onnx"):
            if domain == "com.microsoft" and op in ONNX_MS_PPU:
                self.ppu(node, label, *ONNX_MS_PPU[op])
                return
            self.out.unmap(label, op, f"no array or PPU implementation for ONNX op {domain}.{op} (custom domain)")
            return
        if op in ONNX_PLUMBING:
            self.const.update(node.output)
            if op == "Constant" and node.output:
                self.record_constant(node)
            return
        if op in ONNX_CONV:
            self.conv(node, label)
            return
        if op.startswith("ConvTranspose"):
            raise node_error(self.where, label, op, "transposed convolution is not supported")
        if op == "Gemm":
            self.gemm(node, label)
            return
        if op in ONNX_MATMUL:
            self.matmul(node, label)
            return
        if op in ONNX_PPU or op in ONNX_LAYOUT or op in ("Clip", "Sum"):
            inputs = [i for i in node.input if i]
            if inputs and all(i in self.const for i in inputs):  # constant-folded plumbing
                self.const.update(node.output)
                return
            if op == "Sum":
                self.sum(node, label, len(inputs))
            elif op == "Clip":
                self.ppu(node, label, self.clip_op(node), "out")
            elif op in ONNX_PPU:
                self.ppu(node, label, *ONNX_PPU[op])
            else:
                if op == "Pad":
                    self.try_fold_pad(node)
                self.out.layout(label, op.lower())
            return
        self.out.unmap(label, op, f"no array or PPU implementation for ONNX op {op}")

    def record_constant(self, node: Any) -> None:
        attrs = self.attrs(node)
        try:
            if "value" in attrs:
                value = self.onnx.numpy_helper.to_array(attrs["value"])
            elif "value_float" in attrs or "value_int" in attrs:
                import numpy as np

                value = np.array(attrs.get("value_float", attrs.get("value_int")))
            elif "value_floats" in attrs or "value_ints" in attrs:
                import numpy as np

                value = np.array(attrs.get("value_floats", attrs.get("value_ints")))
            else:
                return
        except Exception:  # noqa: BLE001 - external/sparse constant: value unknown
            return
        self.values[node.output[0]] = value
        self.shapes.setdefault(node.output[0], tuple(int(d) for d in value.shape))

    # --------------------------------------------------------------- array ops
    def need(self, node: Any, label: str, tensor: str, what: str) -> tuple[int, ...]:
        shape = self.known(tensor)
        if shape is None:
            raise node_error(self.where, label, node.op_type, f"{what} shape unknown after ONNX shape inference")
        return shape

    def conv(self, node: Any, label: str) -> None:
        op = node.op_type
        xi, wi = ONNX_CONV[op]
        if len(node.input) <= wi:
            raise node_error(self.where, label, op, "missing weight input")
        x, w = node.input[xi], node.input[wi]
        xs = self.need(node, label, x, "input")
        if len(xs) == 5:
            raise node_error(self.where, label, op, "3-D convolution is not supported")
        if len(xs) not in (3, 4):
            raise node_error(self.where, label, op, f"{len(xs)}-D input is not a 1-D or 2-D convolution")
        if w not in self.const:
            raise node_error(self.where, label, op, "weights are not constant (dynamic weights are not supported)")
        ws = self.need(node, label, w, "weight")
        a = self.attrs(node)
        one_d = len(xs) == 3

        def pair(key: str, default: int) -> tuple[int, int]:
            v = [int(e) for e in a.get(key, [default] * (1 if one_d else 2))]
            v = [1, *v] if one_d and len(v) == 1 else v
            if len(v) != 2:
                raise node_error(self.where, label, op,
                                 f"{key} {list(a[key])} do not match a {1 if one_d else 2}-D input")
            return v[0], v[1]

        if one_d:
            xs = (xs[0], xs[1], 1, xs[2])
            ws = (ws[0], ws[1], 1, ws[2]) if len(ws) == 3 else ws
        if len(ws) != 4:
            raise node_error(self.where, label, op, f"weight shape {list(ws)} does not match a {len(xs) - 2}-D input")
        n, c, h, wd = xs
        m, cg, kh, kw = ws
        group = int(a.get("group", 1))
        if "kernel_shape" in a:
            ks = pair("kernel_shape", 1)
            if tuple(ks) != (kh, kw):
                raise node_error(self.where, label, op, f"kernel_shape {list(a['kernel_shape'])} does not match "
                                                        f"the weights {list(ws)}")
        if group < 1 or c != cg * group or m % group:
            raise node_error(self.where, label, op, f"input has {c} channels but the weights {list(ws)} with "
                                                    f"group={group} expect {cg * group}")
        sh, sw = pair("strides", 1)
        dh, dw = pair("dilations", 1)
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else str(auto)
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            lower = auto == "SAME_LOWER"
            pt, pb = same_pads(h, kh, sh, dh, lower)
            pl, pr = same_pads(wd, kw, sw, dw, lower)
        elif auto == "VALID":
            pt = pl = pb = pr = 0
        else:
            pads = list(a.get("pads", [0] * (2 if one_d else 4)))
            if one_d:
                pads = [0, pads[0], 0, pads[1]] if len(pads) == 2 else pads
            if len(pads) != 4:
                raise node_error(self.where, label, op, f"pads {pads} do not match a 2-D convolution")
            pt, pl, pb, pr = (int(p) for p in pads)
        if x in self.folded:  # a Pad folded into this convolution
            src, (ft, fl, fb, fr) = self.folded[x]
            n, c, h, wd = self.known(src)  # type: ignore[misc]
            pt, pl, pb, pr = pt + ft, pl + fl, pb + fb, pr + fr
        try:
            self.out.conv(label, n, c, m, h, wd, kh, kw, (sh, sw), (pt, pl, pb, pr), (dh, dw), group)
        except ValueError as exc:
            raise node_error(self.where, label, op, str(exc)) from None

    def gemm(self, node: Any, label: str) -> None:
        a_name, b_name = node.input[0], node.input[1]
        a_shape = self.need(node, label, a_name, "input A")
        b_shape = self.need(node, label, b_name, "input B")
        if len(a_shape) != 2 or len(b_shape) != 2:
            raise node_error(self.where, label, "Gemm",
                             f"operands must be 2-D, got {list(a_shape)} and {list(b_shape)}")
        attrs = self.attrs(node)
        m, k = a_shape[::-1] if attrs.get("transA", 0) else a_shape
        k2, n = b_shape[::-1] if attrs.get("transB", 0) else b_shape
        if k != k2:
            raise node_error(self.where, label, "Gemm", f"inner dims differ: A {list(a_shape)}, B {list(b_shape)}")
        self.array_gemm(node, label, "fc" if b_name in self.const else "matmul", 1, m, n, k)

    def matmul(self, node: Any, label: str) -> None:
        op = node.op_type
        ai, bi = ONNX_MATMUL[op]
        a_shape = self.need(node, label, node.input[ai], "input A")
        b_shape = self.need(node, label, node.input[bi], "input B")
        try:
            batch, m, n, k = matmul_dims(a_shape, b_shape)
        except ValueError as exc:
            raise node_error(self.where, label, op, f"{exc} (A {list(a_shape)}, B {list(b_shape)})") from None
        self.array_gemm(node, label, "matmul", batch, m, n, k)

    def array_gemm(self, node: Any, label: str, op: str, batch: int, m: int, n: int, k: int) -> None:
        try:
            self.out.gemm(label, op, batch, m, n, k)
        except ValueError as exc:
            raise node_error(self.where, label, node.op_type, str(exc)) from None

    # --------------------------------------------------------------- PPU and layout
    def ppu(self, node: Any, label: str, op: str, basis: str) -> None:
        tensor = node.input[0] if basis == IN else node.output[0]
        shape = self.known(tensor)
        if shape is None:
            side = "input" if basis == IN else "output"
            self.out.unmap(label, node.op_type, f"{op} on the PPU, but its {side} shape is unknown after ONNX "
                                                f"shape inference (no element count)")
            return
        self.out.ppu(label, op, elements(shape))

    def sum(self, node: Any, label: str, terms: int) -> None:
        """The variadic ``Sum`` (older exports' residual adds, e.g. ResNet-50 and ShuffleNet in
        the ONNX model zoo): ``terms - 1`` PPU adds per output element; one term is a copy."""
        if terms < 2:
            self.out.layout(label, "identity")
            return
        shape = self.known(node.output[0])
        if shape is None:
            self.out.unmap(label, "Sum", "add on the PPU, but its output shape is unknown after ONNX shape "
                                         "inference (no element count)")
            return
        self.out.ppu(label, "add", elements(shape) * (terms - 1))

    def clip_op(self, node: Any) -> str:
        attrs = self.attrs(node)
        if "min" in attrs or "max" in attrs:  # opset < 11
            lo, hi = attrs.get("min"), attrs.get("max")
        else:
            lo, hi = (self.bound(node, i) for i in (1, 2))
            if lo is _UNKNOWN or hi is _UNKNOWN:
                return "clip"
        unbounded = hi is None or hi >= 3.0e38
        if lo == 0 and hi == 6:
            return "relu6"
        if lo == 0 and unbounded:
            return "relu"
        return "clip"

    def bound(self, node: Any, idx: int) -> Any:
        """A Clip bound: a float, ``None`` (absent) or ``_UNKNOWN`` (not readable)."""
        if len(node.input) <= idx or not node.input[idx]:
            return None
        value = self.value(node.input[idx])
        if value is None or value.size != 1:
            return _UNKNOWN
        return float(value.reshape(()))

    def try_fold_pad(self, node: Any) -> None:
        """Fold a zero, constant-mode Pad on H/W into the convolutions that read it."""
        attrs = self.attrs(node)
        mode = attrs.get("mode", b"constant")
        if (mode.decode() if isinstance(mode, bytes) else mode) != "constant":
            return
        if "pads" in attrs:  # opset < 11
            pads, fill = list(attrs["pads"]), attrs.get("value", 0.0)
        else:
            if len(node.input) > 3 and node.input[3]:  # axes (opset 18)
                return
            value = self.value(node.input[1]) if len(node.input) > 1 else None
            if value is None:
                return
            pads = [int(v) for v in value.reshape(-1)]
            fill = 0.0
            if len(node.input) > 2 and node.input[2]:
                fv = self.value(node.input[2])
                if fv is None or fv.size != 1:
                    return
                fill = float(fv.reshape(()))
        src, out = node.input[0], node.output[0]
        if fill != 0 or len(pads) != 8 or any(p < 0 for p in pads) or any(pads[i] for i in (0, 1, 4, 5)):
            return
        if self.known(src) is None or out in self.outputs or not self.consumers[out]:
            return
        if not all(c.op_type in ONNX_CONV and c.domain in ("", "ai.onnx") and ONNX_CONV[c.op_type][0] == i
                   for c, i in self.consumers[out]):
            return
        self.folded[out] = (src, (pads[2], pads[3], pads[6], pads[7]))


def _shape_of(value: Any) -> Shape | None:
    tt = value.type.tensor_type if value.type.HasField("tensor_type") else None
    if tt is None or not tt.HasField("shape"):
        return None
    return tuple(int(d.dim_value) if d.HasField("dim_value") else None for d in tt.shape.dim)


IMPORTER = Importer("onnx", load, "give an ONNX model (e.g. from torch.onnx.export) or fix the node it names",
                    symbols=True)
