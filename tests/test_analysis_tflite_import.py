"""TFLite import without TensorFlow: models written here with flatbuffers.Builder, same IR as ONNX,
and real files written by TensorFlow's converter that maintained wheels ship.

:class:`TFLiteWriter` writes ``.tflite`` flatbuffers with the slots of
tensorflow/compiler/mlir/lite/schema/schema.fbs (field order = slot order, a union takes
two slots); the importer reads them, like the real files, through the ``tflite`` package's
generated accessors. The real files: MediaPipe's BlazeFace and litert-cli's test model
(copied to ``tests/data``, see its README) and TFLM's sine model (the ``tflite-micro``
wheel of the ``dev`` extra).
"""
from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from math import prod
from pathlib import Path

import pytest

flatbuffers = pytest.importorskip("flatbuffers", reason="the 'flatbuffers' package is not installed")

from lego_build.analysis.importers import load_model
from lego_build.analysis.importers.common import TFLITE_BUILTINS, tflite_code
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.errors import ConfigError

SAME, VALID = 0, 1
NONE, RELU, RELU6, SIGN_BIT = 0, 1, 3, 5
FLOAT32, INT32 = 0, 2


# ----------------------------------------------------------------------------- writer
@dataclass
class _T:
    name: str
    shape: tuple[int, ...]
    type: int
    buffer: int
    signature: tuple[int, ...] | None


@dataclass
class _Op:
    code: int
    inputs: list[int]
    outputs: list[int]
    options_type: int
    options: list[tuple[int, str, object, object]]  # (slot, kind, value, schema default)
    custom: str | None


@dataclass
class TFLiteWriter:
    """A subgraph-0-only TFLite model builder (float32 tensors, zero-filled constants)."""

    tensors: list[_T] = field(default_factory=list)
    buffers: list[bytes] = field(default_factory=lambda: [b""])  # buffer 0: the empty sentinel
    ops: list[_Op] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)

    def tensor(self, name: str, shape, const: bool = False, data: bytes | None = None, type: int = FLOAT32,
               signature=None) -> int:
        buffer = 0
        if const or data is not None:
            count = 1
            for d in shape:
                count *= d
            self.buffers.append(data if data is not None else bytes(4 * count))
            buffer = len(self.buffers) - 1
        self.tensors.append(_T(name, tuple(shape), type, buffer, None if signature is None else tuple(signature)))
        return len(self.tensors) - 1

    def op(self, builtin: str, inputs, outputs, options_type: int = 0, options=(), custom: str | None = None) -> None:
        self.ops.append(_Op(tflite_code(builtin), list(inputs), list(outputs), options_type, list(options), custom))

    # ------------------------------------------------------------------ options helpers (schema slots)
    @staticmethod
    def conv_options(padding, stride_w, stride_h, act=NONE, dil_w=1, dil_h=1):
        return 1, [(0, "i8", padding, 0), (1, "i32", stride_w, 0), (2, "i32", stride_h, 0), (3, "i8", act, 0),
                   (4, "i32", dil_w, 1), (5, "i32", dil_h, 1)]

    @staticmethod
    def dw_options(padding, stride_w, stride_h, multiplier, act=NONE, dil_w=1, dil_h=1):
        return 2, [(0, "i8", padding, 0), (1, "i32", stride_w, 0), (2, "i32", stride_h, 0),
                   (3, "i32", multiplier, 0), (4, "i8", act, 0), (5, "i32", dil_w, 1), (6, "i32", dil_h, 1)]

    @staticmethod
    def pool_options(padding, stride_w, stride_h, fw, fh, act=NONE):
        return 5, [(0, "i8", padding, 0), (1, "i32", stride_w, 0), (2, "i32", stride_h, 0), (3, "i32", fw, 0),
                   (4, "i32", fh, 0), (5, "i8", act, 0)]

    @staticmethod
    def fc_options(act=NONE):
        return 8, [(0, "i8", act, 0)]

    @staticmethod
    def add_options(act=NONE):
        return 11, [(0, "i8", act, 0)]

    @staticmethod
    def reducer_options(keep_dims=True):
        return 27, [(0, "bool", keep_dims, False)]

    @staticmethod
    def bmm_options(adj_x=False, adj_y=False):
        return 101, [(0, "bool", adj_x, False), (1, "bool", adj_y, False)]

    # ------------------------------------------------------------------ serialisation
    def build(self, identifier: bytes = b"TFL3", deprecated_codes: bool = True) -> bytes:
        b = flatbuffers.Builder(1024)

        def ints(values):
            b.StartVector(4, len(values), 4)
            for v in reversed(values):
                b.PrependInt32(v)
            return b.EndVector()

        def tables(offsets):
            b.StartVector(4, len(offsets), 4)
            for off in reversed(offsets):
                b.PrependUOffsetTRelative(off)
            return b.EndVector()

        buffers = []
        for data in self.buffers:
            vec = b.CreateByteVector(data) if data else None
            b.StartObject(3)
            if vec is not None:
                b.PrependUOffsetTRelativeSlot(0, vec, 0)
            buffers.append(b.EndObject())
        tensors = []
        for t in self.tensors:
            name, shape = b.CreateString(t.name), ints(t.shape)
            sig = ints(t.signature) if t.signature is not None else None
            b.StartObject(10)
            b.PrependUOffsetTRelativeSlot(0, shape, 0)
            b.PrependInt8Slot(1, t.type, 0)
            b.PrependUint32Slot(2, t.buffer, 0)
            b.PrependUOffsetTRelativeSlot(3, name, 0)
            if sig is not None:
                b.PrependUOffsetTRelativeSlot(7, sig, 0)
            tensors.append(b.EndObject())
        codes: list[tuple[int, str | None]] = []
        ops = []
        for op in self.ops:
            key = (op.code, op.custom)
            if key not in codes:
                codes.append(key)
            ins, outs = ints(op.inputs), ints(op.outputs)
            opts = None
            if op.options_type:
                b.StartObject(1 + max((s for s, *_ in op.options), default=0))
                for slot, kind, value, default in op.options:
                    {"i8": b.PrependInt8Slot, "i32": b.PrependInt32Slot, "bool": b.PrependBoolSlot}[kind](
                        slot, value, default)
                opts = b.EndObject()
            b.StartObject(6)
            b.PrependUint32Slot(0, codes.index(key), 0)
            b.PrependUOffsetTRelativeSlot(1, ins, 0)
            b.PrependUOffsetTRelativeSlot(2, outs, 0)
            if opts is not None:
                b.PrependUint8Slot(3, op.options_type, 0)
                b.PrependUOffsetTRelativeSlot(4, opts, 0)
            ops.append(b.EndObject())
        subgraph_parts = (tables(tensors), ints(self.inputs), ints(self.outputs), tables(ops), b.CreateString("main"))
        b.StartObject(5)
        for slot, off in enumerate(subgraph_parts):
            b.PrependUOffsetTRelativeSlot(slot, off, 0)
        subgraph = b.EndObject()
        opcodes = []
        for code, custom in codes:
            custom_off = b.CreateString(custom) if custom else None
            b.StartObject(4)
            if deprecated_codes:  # the byte field saturates at PLACEHOLDER_FOR_GREATER_OP_CODES (127)
                b.PrependInt8Slot(0, min(code, 127), 0)
            if custom_off is not None:
                b.PrependUOffsetTRelativeSlot(1, custom_off, 0)
            b.PrependInt32Slot(2, 1, 1)
            b.PrependInt32Slot(3, code, 0)
            opcodes.append(b.EndObject())
        parts = (tables(opcodes), tables([subgraph]), b.CreateString("test model"), tables(buffers))
        b.StartObject(8)
        b.PrependUint32Slot(0, 3, 0)
        for slot, off in zip((1, 2, 3, 4), parts):
            b.PrependUOffsetTRelativeSlot(slot, off, 0)
        model = b.EndObject()
        b.Finish(model, file_identifier=identifier)
        return bytes(b.Output())

    def save(self, path: Path, **kwargs) -> Path:
        path.write_bytes(self.build(**kwargs))
        return path


def load(path: Path, batch: int = 1, bits: int = 8):
    return load_model("tflite", str(path), path.stem, batch, bits)


def compute(wl):
    """The non-layout layers as comparable (op, kernel, elements) triples."""
    return [(layer.op, layer.kernel, layer.elements) for layer in wl.layers if layer.kernel or layer.elements]


# ----------------------------------------------------------------------------- the small CNN, twice
def small_cnn_tflite(path: Path, batch_signature: bool = False) -> Path:
    """NHWC: conv 3x3/2 SAME + relu, depthwise 3x3 + relu6, 1x1 conv, mean, reshape, fc, softmax."""
    m = TFLiteWriter()
    sig = (lambda s: (-1, *s[1:])) if batch_signature else (lambda s: None)
    x = m.tensor("input", (1, 32, 32, 3), signature=sig((1, 32, 32, 3)))
    w1, b1 = m.tensor("w1", (16, 3, 3, 3), const=True), m.tensor("b1", (16,), const=True)
    y1 = m.tensor("conv1;conv1/Relu", (1, 16, 16, 16), signature=sig((1, 16, 16, 16)))
    m.op("CONV_2D", [x, w1, b1], [y1], *TFLiteWriter.conv_options(SAME, 2, 2, RELU))
    w2, b2 = m.tensor("w2", (1, 3, 3, 16), const=True), m.tensor("b2", (16,), const=True)
    y2 = m.tensor("dw", (1, 16, 16, 16), signature=sig((1, 16, 16, 16)))
    m.op("DEPTHWISE_CONV_2D", [y1, w2, b2], [y2], *TFLiteWriter.dw_options(SAME, 1, 1, 1, RELU6))
    w3, b3 = m.tensor("w3", (32, 1, 1, 16), const=True), m.tensor("b3", (32,), const=True)
    y3 = m.tensor("pw", (1, 16, 16, 32), signature=sig((1, 16, 16, 32)))
    m.op("CONV_2D", [y2, w3, b3], [y3], *TFLiteWriter.conv_options(VALID, 1, 1))
    axes = m.tensor("axes", (2,), data=struct.pack("<2i", 1, 2), type=INT32)
    y4 = m.tensor("mean", (1, 1, 1, 32), signature=sig((1, 1, 1, 32)))
    m.op("MEAN", [y3, axes], [y4], *TFLiteWriter.reducer_options(True))
    shape = m.tensor("shape", (2,), data=struct.pack("<2i", -1, 32), type=INT32)
    y5 = m.tensor("flat", (1, 32), signature=sig((1, 32)))
    m.op("RESHAPE", [y4, shape], [y5])
    w6, b6 = m.tensor("w6", (10, 32), const=True), m.tensor("b6", (10,), const=True)
    y6 = m.tensor("fc", (1, 10), signature=sig((1, 10)))
    m.op("FULLY_CONNECTED", [y5, w6, b6], [y6], *TFLiteWriter.fc_options())
    y7 = m.tensor("prob", (1, 10), signature=sig((1, 10)))
    m.op("SOFTMAX", [y6], [y7], 9, [])
    m.inputs, m.outputs = [x], [y7]
    return m.save(path)


def small_cnn_onnx(path: Path) -> Path:
    """The same network in NCHW; conv pads chosen to equal TFLite SAME."""
    onnx = pytest.importorskip("onnx", reason="the 'onnx' package is not installed")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def w(name, shape):
        return numpy_helper.from_array(np.zeros(shape, np.float32), name)

    zero, six = (numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("zero", 0.0), ("six", 6.0)))
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], strides=[2, 2],
                         pads=[0, 0, 1, 1]),  # SAME, 32 -> 16: total pad 1, top 0, bottom 1
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="dw", group=16, pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c2", "zero", "six"], ["r2"], name="relu6"),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], name="pw"),
        helper.make_node("GlobalAveragePool", ["c3"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w6", "b6"], ["y"], name="fc", transB=1),
        helper.make_node("Softmax", ["y"], ["p"], name="softmax"),
    ]
    inits = [w("w1", [16, 3, 3, 3]), w("b1", [16]), w("w2", [16, 1, 3, 3]), w("b2", [16]), w("w3", [32, 16, 1, 1]),
             w("w6", [10, 32]), w("b6", [10]), zero, six]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 10])], initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_small_cnn_layers(tmp_path):
    wl = load(small_cnn_tflite(tmp_path / "cnn.tflite"))
    assert [(layer.name, layer.op) for layer in wl.layers] == [
        ("conv1", "conv2d"), ("conv1/relu", "relu"), ("dw", "depthwise"), ("dw/relu6", "relu6"),
        ("pw", "conv2d"), ("mean", "avgpool"), ("flat", "reshape"), ("fc", "fc"), ("prob", "softmax")]
    k = {layer.name: layer.kernel for layer in wl.array_layers}
    assert k["conv1"] == conv2d(1, 3, 16, 32, 32, 3, 3, (2, 2), (0, 0, 1, 1), 1, 1, 8)
    assert k["dw"] == conv2d(1, 16, 16, 16, 16, 3, 3, 1, 1, 1, 16, 8)
    assert k["pw"] == conv2d(1, 16, 32, 16, 16, 1, 1, 1, 0, 1, 1, 8)
    assert k["fc"] == gemm(1, 10, 32)
    assert wl.layers[5].elements == 32 * 16 * 16  # MEAN: input elements (global pool)
    assert wl.unmapped == () and wl.source.startswith("tflite:")


def test_tflite_and_onnx_import_to_the_same_ir(tmp_path):
    tfl = load(small_cnn_tflite(tmp_path / "cnn.tflite"))
    onx = load_model("onnx", str(small_cnn_onnx(tmp_path / "cnn.onnx")), "cnn", 1, 8)
    assert compute(tfl) == compute(onx)
    assert [layer.kernel for layer in tfl.array_layers] == [layer.kernel for layer in onx.array_layers]
    assert tfl.macs == onx.macs


def test_dynamic_batch_signature_uses_the_configured_batch(tmp_path):
    wl = load(small_cnn_tflite(tmp_path / "cnn.tflite", batch_signature=True), batch=4)
    assert wl.array_layers[0].kernel == conv2d(4, 3, 16, 32, 32, 3, 3, (2, 2), (0, 0, 1, 1), 1, 1, 8)
    assert wl.array_layers[-1].kernel == gemm(4, 10, 32)
    static = small_cnn_tflite(tmp_path / "static.tflite")
    assert load(static).array_layers[0].kernel.dims[0].bound == 1
    with pytest.raises(ConfigError, match=r"^workload.batch=4: workload.path=.*static.tflite has no dynamic batch "
                                          r"\(its shapes are fixed\); use workload.batch=1"):
        load(static, batch=4)  # refused, not ignored


# ----------------------------------------------------------------------------- more ops
def test_pool_add_batch_matmul_pad_and_grouped_conv(tmp_path):
    m = TFLiteWriter()
    x = m.tensor("x", (1, 8, 8, 4))
    p = m.tensor("p", (1, 4, 4, 4))
    m.op("AVERAGE_POOL_2D", [x], [p], *TFLiteWriter.pool_options(VALID, 2, 2, 2, 2))
    q = m.tensor("q", (1, 4, 4, 4))
    m.op("MAX_POOL_2D", [p], [q], *TFLiteWriter.pool_options(SAME, 1, 1, 3, 3, RELU))
    s = m.tensor("s", (1, 4, 4, 4))
    m.op("ADD", [p, q], [s], *TFLiteWriter.add_options(RELU6))
    pads = m.tensor("pads", (4, 2), data=struct.pack("<8i", 0, 0, 1, 2, 3, 4, 0, 0), type=INT32)
    sp = m.tensor("sp", (1, 7, 11, 4))
    m.op("PAD", [s, pads], [sp])
    wg, bg = m.tensor("wg", (8, 3, 3, 2), const=True), m.tensor("bg", (8,), const=True)  # OHWI, I = C / 2
    g = m.tensor("grouped", (1, 5, 9, 8))
    m.op("CONV_2D", [sp, wg, bg], [g], *TFLiteWriter.conv_options(VALID, 1, 1))
    a = m.tensor("a", (2, 3, 5, 7))
    bt = m.tensor("b", (2, 3, 6, 7))  # adj_y: [.., N, K]
    o = m.tensor("ab", (2, 3, 5, 6))
    m.op("BATCH_MATMUL", [a, bt], [o], *TFLiteWriter.bmm_options(adj_y=True))
    m.inputs, m.outputs = [x, a, bt], [g, o]
    wl = load(m.save(tmp_path / "ops.tflite"))
    assert [(layer.name, layer.op, layer.elements) for layer in wl.layers if not layer.kernel] == [
        ("p", "avgpool", 256), ("q", "maxpool", 64), ("q/relu", "relu", 64), ("s", "add", 64),
        ("s/relu6", "relu6", 64), ("sp", "pad", 0)]
    (conv, mm) = wl.array_layers
    # the PAD is folded into the convolution: X is the unpadded 4x4 input
    assert (conv.op, conv.kernel) == ("group_conv", conv2d(1, 4, 8, 4, 4, 3, 3, 1, (1, 3, 2, 4), 1, 2, 8))
    assert (mm.op, mm.kernel) == ("matmul", gemm(5, 6, 7, batch=6))


def test_new_op_codes_use_builtin_code(tmp_path):
    """GELU (150) sits above 127: the deprecated byte holds the placeholder, max() picks 150."""
    m = TFLiteWriter()
    x, y, z = m.tensor("x", (2, 8)), m.tensor("y", (2, 8)), m.tensor("z", (2, 8))
    m.op("GELU", [x], [y])
    m.op("HARD_SWISH", [y], [z])
    m.inputs, m.outputs = [x], [z]
    for deprecated in (True, False):
        wl = load(m.save(tmp_path / f"gelu{deprecated}.tflite", deprecated_codes=deprecated))
        assert [(layer.op, layer.elements) for layer in wl.layers] == [("gelu", 16), ("hswish", 16)]


def test_unknown_custom_and_sign_bit_are_unmapped(tmp_path):
    m = TFLiteWriter()
    x, y, z, u, v = (m.tensor(n, (1, 4)) for n in "xyzuv")
    m.op("ARG_MAX", [x], [y])
    m.op("CUSTOM", [x], [z], custom="MyFancyOp")
    m.op("ADD", [x, x], [u], *TFLiteWriter.add_options(SIGN_BIT))
    m.op("SHAPE", [x], [v])
    m.inputs, m.outputs = [x], [y, z, u]
    wl = load(m.save(tmp_path / "odd.tflite"))
    assert [(u.name, u.op) for u in wl.unmapped] == [("y", "ARG_MAX"), ("z", "MyFancyOp"),
                                                     ("u/activation", "fused activation 5")]
    assert "no array or PPU implementation for TFLite op ARG_MAX" in wl.unmapped[0].reason
    assert [(layer.name, layer.op) for layer in wl.layers] == [("u", "add")]  # SHAPE is plumbing


def test_transpose_conv_raises_naming_the_node(tmp_path):
    m = TFLiteWriter()
    x, w, y = m.tensor("x", (1, 4, 4, 2)), m.tensor("w", (2, 3, 3, 2), const=True), m.tensor("up", (1, 8, 8, 2))
    m.op("TRANSPOSE_CONV", [x, w], [y])
    with pytest.raises(ConfigError, match=r"node 'up' \(TRANSPOSE_CONV\): transposed convolution is not supported"):
        load(m.save(tmp_path / "t.tflite"))


def test_dynamic_filter_raises(tmp_path):
    m = TFLiteWriter()
    x, w, y = m.tensor("x", (1, 4, 4, 2)), m.tensor("w", (2, 3, 3, 2)), m.tensor("y", (1, 4, 4, 2))
    m.op("CONV_2D", [x, w], [y], *TFLiteWriter.conv_options(SAME, 1, 1))
    with pytest.raises(ConfigError, match=r"node 'y' \(CONV_2D\): filter is not constant"):
        load(m.save(tmp_path / "d.tflite"))


# ----------------------------------------------------------------------------- broken files
def test_truncated_file_raises_naming_the_file(tmp_path):
    data = small_cnn_tflite(tmp_path / "cnn.tflite").read_bytes()
    for cut in (len(data) // 2, 200, 12):
        path = tmp_path / "cut.tflite"
        path.write_bytes(data[:cut])
        with pytest.raises(ConfigError, match=r"workload.path=.*cut.tflite: not a valid TFLite model") as err:
            load(path)
        assert "\n" not in str(err.value)


def test_garbage_with_the_right_identifier_raises(tmp_path):
    path = tmp_path / "junk.tflite"
    path.write_bytes(b"\x10\x00\x00\x00TFL3" + bytes(range(7, 250)) * 3)
    with pytest.raises(ConfigError, match=r"junk.tflite: not a valid TFLite model"):
        load(path)


def test_wrong_file_identifier_raises(tmp_path):
    path = small_cnn_tflite(tmp_path / "cnn.tflite")
    data = path.read_bytes()
    path.write_bytes(data[:4] + b"XXXX" + data[8:])
    with pytest.raises(ConfigError, match=r"cnn.tflite: not a TFLite model \(file identifier b'XXXX', "
                                          r"expected b'TFL3'\)"):
        load(path)
    path.write_bytes(b"abc")
    with pytest.raises(ConfigError, match="not a TFLite model"):
        load(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="missing.tflite: no such tflite file"):
        load(tmp_path / "missing.tflite")


def test_builtin_table_matches_the_schema_enum():
    anchors = {0: "ADD", 3: "CONV_2D", 4: "DEPTHWISE_CONV_2D", 9: "FULLY_CONNECTED", 25: "SOFTMAX",
               32: "CUSTOM", 40: "MEAN", 67: "TRANSPOSE_CONV", 114: "QUANTIZE", 117: "HARD_SWISH",
               126: "BATCH_MATMUL", 127: "PLACEHOLDER_FOR_GREATER_OP_CODES", 132: "CONV_3D", 150: "GELU",
               161: "RIGHT_SHIFT", 162: "STABLEHLO_LOGISTIC", 203: "DILATE", 209: "STABLEHLO_CASE"}
    assert {i: TFLITE_BUILTINS[i] for i in anchors} == anchors
    assert len(TFLITE_BUILTINS) == 210 and len(set(TFLITE_BUILTINS)) == 210


def test_analysis_document_of_an_imported_model_fits_the_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")
    import json

    from lego_build.analysis.stage import SCHEMA, analysis_document

    doc = analysis_document(load(small_cnn_tflite(tmp_path / "cnn.tflite")))
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert doc["totals"]["ppu_elements"] == {"avgpool": 8192, "relu": 4096, "relu6": 4096, "softmax": 10}


# ----------------------------------------------------------------------------- sparse weights
def test_densify_of_constant_weights_is_plumbing(tmp_path):
    """MediaPipe's sparse models keep weights compressed: DENSIFY (then DEQUANTIZE) runs on
    constants only, so the convolution still sees a constant filter."""
    m = TFLiteWriter()
    x = m.tensor("x", (1, 8, 8, 4))
    sparse = m.tensor("w_sparse", (8, 1, 1, 4), const=True)
    dense = m.tensor("w_dense", (8, 1, 1, 4))
    m.op("DENSIFY", [sparse], [dense])
    y = m.tensor("y", (1, 8, 8, 8))
    m.op("CONV_2D", [x, dense], [y], *TFLiteWriter.conv_options(VALID, 1, 1))
    z = m.tensor("z", (1, 8, 8, 8))
    m.op("DENSIFY", [y], [z])  # never written by a converter: listed, not dropped
    m.inputs, m.outputs = [x], [z]
    wl = load(m.save(tmp_path / "sparse.tflite"))
    assert [(layer.name, layer.op) for layer in wl.layers] == [("y", "conv2d")]
    assert [(u.name, u.op) for u in wl.unmapped] == [("z", "DENSIFY")]


# ----------------------------------------------------------------------------- real converter output
DATA = Path(__file__).parent / "data"
BLAZEFACE = DATA / "face_detection_short_range.tflite"  # mediapipe 0.10.21 (tests/data/README.md)
DUMMY_CV = DATA / "dummy_cv_model.tflite"  # litert-cli 0.2.1


def tflite_micro_sine() -> Path:
    """``sine_float.tflite`` as the ``tflite-micro`` wheel (the ``dev`` extra) installed it."""
    from importlib import metadata

    try:
        dist = metadata.distribution("tflite-micro")
    except metadata.PackageNotFoundError:
        pytest.skip("tflite-micro is not installed (pip install -e '.[dev]'; wheels for x86-64 Linux only)")
    path = Path(dist.locate_file("tflite_micro/python/tflite_micro/sine_float.tflite"))
    assert path.is_file(), f"tflite-micro {dist.version} no longer ships {path.name}"
    return path


def reference(path: Path):
    """Every operator of subgraph 0 as ``(builtin, label, input shapes, output shape)``, read
    with the ``tflite`` package's accessors alone, and the model's description."""
    import tflite

    buf = path.read_bytes()
    model = tflite.Model.GetRootAs(buf, 0)
    sg = model.Subgraphs(0)

    def shape(t):
        return tuple(int(d) for d in sg.Tensors(t).ShapeAsNumpy()) if t >= 0 else None

    ops = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        oc = model.OperatorCodes(op.OpcodeIndex())
        out = sg.Tensors(op.Outputs(0))
        ops.append((TFLITE_BUILTINS[max(oc.DeprecatedBuiltinCode(), oc.BuiltinCode())],
                    out.Name().decode().split(";")[0], [shape(t) for t in op.InputsAsNumpy()], shape(op.Outputs(0))))
    io = ([shape(sg.Inputs(i)) for i in range(sg.InputsLength())],
          [shape(sg.Outputs(i)) for i in range(sg.OutputsLength())])
    return ops, io, model.Description()


def expected_array_layers(ops):
    """``(label, op, MACs, output elements)`` of each CONV_2D / DEPTHWISE_CONV_2D /
    FULLY_CONNECTED, from the file's own tensor shapes: conv ``out x KH x KW x C_in``
    (OHWI filter), depthwise ``out x KH x KW`` (``[1, KH, KW, C]`` filter), FC ``M x N x K``."""
    rows = []
    for builtin, label, ins, out in ops:
        if builtin == "CONV_2D":
            _, kh, kw, ic = ins[1]
            rows.append((label, "conv2d", prod(out) * kh * kw * ic, prod(out)))
        elif builtin == "DEPTHWISE_CONV_2D":
            _, kh, kw, _ = ins[1]
            rows.append((label, "depthwise", prod(out) * kh * kw, prod(out)))
        elif builtin == "FULLY_CONNECTED":
            n, k = ins[1]
            rows.append((label, "fc", prod(ins[0]) // k * n * k, prod(out)))
    return rows


def imported_array_layers(wl):
    return [(layer.name, layer.op, layer.kernel.macs, prod(layer.kernel.output.shape)) for layer in wl.array_layers]


def test_blazeface_from_mediapipe(tmp_path):
    """MediaPipe's short-range BlazeFace (Bazarevsky et al. 2019, arXiv:1907.05047): a
    128x128x3 input, a 5x5 stride-2 conv to 24 channels, BlazeBlocks of depthwise 3x3 + 1x1
    convs with residual adds, and 2 + 6 anchors per cell on 16x16 and 8x8 maps: 896."""
    ops, (inputs, outputs), description = reference(BLAZEFACE)
    assert description == b"keras2tflite_facedetector-front.tflite.generated"
    assert inputs == [(1, 128, 128, 3)] and outputs == [(1, 896, 16), (1, 896, 1)]
    wl = load(BLAZEFACE)
    assert wl.unmapped == ()
    assert len(wl.layers) == 90 and len(wl.array_layers) == 37
    assert Counter(layer.op for layer in wl.layers) == {
        "conv2d": 21, "depthwise": 16, "relu": 17, "add": 16, "pad": 11, "maxpool": 3, "reshape": 4,
        "concatenation": 2}
    # the 74 DEQUANTIZE ops turn fp16 weights into fp32 constants: plumbing, not layers
    assert Counter(op for op, *_ in ops)["DEQUANTIZE"] == 74
    assert imported_array_layers(wl) == expected_array_layers(ops)
    assert wl.macs == sum(macs for _, _, macs, _ in expected_array_layers(ops)) == 30_760_960
    first = wl.layers[0]
    # SAME, 128 -> 64 with a 5x5 window at stride 2: 3 rows of padding, 1 above and 2 below
    assert (first.name, first.op, first.kernel) == (
        "conv2d", "conv2d", conv2d(1, 3, 24, 128, 128, 5, 5, (2, 2), (1, 1, 2, 2), 1, 1, 8))
    k = {layer.name: layer.kernel for layer in wl.array_layers}
    assert k["depthwise_conv2d"] == conv2d(1, 24, 24, 64, 64, 3, 3, 1, 1, 1, 24, 8)
    # stride-2 depthwise: SAME pads 0 above, 1 below
    assert k["depthwise_conv2d_2"] == conv2d(1, 28, 28, 64, 64, 3, 3, (2, 2), (0, 0, 1, 1), 1, 28, 8)
    heads = {name: k[name].output.shape for name in ("classificator_8", "classificator_16")}
    assert heads == {"classificator_8": (1, 2, 16, 16), "classificator_16": (1, 6, 8, 8)}
    assert sum(prod(s[1:]) for s in heads.values()) == 896
    assert {layer.elements for layer in wl.layers if layer.op == "pad"} == {0}  # channel padding: layout


def test_pytorch_model_converted_for_litert():
    """litert-cli's DummyVisionModel: NCHW input, TRANSPOSE to NHWC, Conv2d(3, 16, 3) with a
    fused ReLU, AdaptiveAvgPool2d as SUM (its 1/N folded into the FC), Linear(16, 10)."""
    ops, (inputs, outputs), description = reference(DUMMY_CV)
    assert description == b"MLIR Converted."
    assert inputs == [(1, 3, 224, 224)] and outputs == [(1, 10)]
    assert [op for op, *_ in ops] == ["TRANSPOSE", "CONV_2D", "SUM", "FULLY_CONNECTED"]
    wl = load(DUMMY_CV)
    assert wl.unmapped == ()
    assert [layer.op for layer in wl.layers] == ["transpose", "conv2d", "relu", "avgpool", "fc"]
    conv, fc = wl.array_layers
    assert conv.kernel == conv2d(1, 3, 16, 224, 224, 3, 3, 1, 0, 1, 1, 8)
    assert fc.kernel == gemm(1, 10, 16)
    assert wl.layers[3].elements == 222 * 222 * 16  # the pool reads the whole feature map
    assert imported_array_layers(wl) == expected_array_layers(ops)
    assert wl.macs == 222 * 222 * 16 * 27 + 160 == 21_290_848


def test_tflite_micro_sine_model():
    """TFLM's hello-world model: Dense(16, relu), Dense(16, relu), Dense(1) on one float."""
    path = tflite_micro_sine()
    ops, (inputs, outputs), description = reference(path)
    assert description == b"MLIR Converted."
    assert inputs == [(1, 1)] and outputs == [(1, 1)]
    wl = load(path)
    assert wl.unmapped == ()
    assert [(layer.op, layer.elements) for layer in wl.layers] == [
        ("fc", 0), ("relu", 16), ("fc", 0), ("relu", 16), ("fc", 0)]
    assert [layer.kernel for layer in wl.array_layers] == [gemm(1, 16, 1), gemm(1, 16, 16), gemm(1, 1, 16)]
    assert imported_array_layers(wl) == expected_array_layers(ops)
    assert wl.macs == 16 + 256 + 16


def test_doit_analyze_blazeface(tmp_path):
    """``doit analyze workload=tflite`` end to end on the real file."""
    import json
    import shutil
    import subprocess
    import sys

    shutil.copy(Path(__file__).resolve().parents[1] / "dodo.py", tmp_path / "dodo.py")
    shutil.copy(BLAZEFACE, tmp_path / "blazeface.tflite")
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(tmp_path / "dodo.py"), "analyze", "workload=tflite",
                           "workload.path=blazeface.tflite"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tflite: 90 layers, 37 on the array, 30,760,960 MACs" in proc.stdout
    doc = json.loads(next((tmp_path / "out").glob("*/analysis.json")).read_text())
    assert doc["totals"]["macs"] == 30_760_960 and doc["totals"]["array_layers"] == 37
    assert doc["totals"]["ppu_elements"] == {"add": 460_800, "maxpool": 180_224, "relu": 559_104}
    assert len(doc["layers"]) == 90 and doc["unmapped"] == []


def test_damaged_real_file_raises_config_error_or_imports(tmp_path):
    """Cut or overwrite bytes of a converter-written file: the import either succeeds or
    stops with a one-line ConfigError naming the file, never another exception."""
    import random

    data = DUMMY_CV.read_bytes()
    rng = random.Random(2024)
    path = tmp_path / "damaged.tflite"
    failures = 0
    for _ in range(300):
        damaged = bytearray(data)
        if rng.random() < 0.3:
            damaged = damaged[:rng.randrange(8, len(damaged))]
        else:
            for _ in range(rng.randint(1, 8)):
                damaged[rng.randrange(8, len(damaged))] = rng.randrange(256)
        path.write_bytes(bytes(damaged))
        try:
            load(path)
        except ConfigError as exc:
            failures += 1
            assert "damaged.tflite" in str(exc) and "\n" not in str(exc)
    assert failures > 50
