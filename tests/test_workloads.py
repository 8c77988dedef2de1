"""lego_build.analysis.networks: built-in network presets from published layer shapes."""
from __future__ import annotations

from math import prod
from pathlib import Path

import pytest

import lego_build
from lego_build.analysis.from_config import workload_from_config
from lego_build.analysis.networks import NETWORKS, names, network
from lego_build.ir.workload import Layer, Workload

CONF_WORKLOAD = Path(__file__).resolve().parents[1] / "conf" / "workload"

PRESETS = ("resnet18", "resnet50", "mobilenetv2", "efficientnetv2", "alexnet", "vgg16", "inceptionv3", "squeezenet",
           "lenet", "bert", "gpt2", "llama7b", "deepbench")

#: input image (C, H, W) of every CNN preset
CNNS: dict[str, tuple[int, int, int]] = {
    "resnet18": (3, 224, 224), "resnet50": (3, 224, 224), "mobilenetv2": (3, 224, 224),
    "alexnet": (3, 224, 224), "vgg16": (3, 224, 224), "inceptionv3": (3, 299, 299),
    "squeezenet": (3, 224, 224), "lenet": (1, 32, 32), "efficientnetv2": (3, 384, 384),
}
TRANSFORMERS = ("bert", "gpt2", "llama7b")

#: exact totals (convs + fc, batch 1) of the layer lists, checked against the published figures below
EXACT_MACS: dict[str, int] = {
    "resnet18": 1_814_073_344,
    "resnet50": 4_089_184_256,     # torchvision v1.5 (stride in the 3x3 conv)
    "vgg16": 15_470_264_320,
    "mobilenetv2": 300_774_272,
    "alexnet": 714_188_480,
    "inceptionv3": 5_713_216_096,
    "squeezenet": 818_924_576,
    "lenet": 416_520,
    "efficientnetv2": 8_365_617_152,  # EfficientNetV2-S at 384x384
}
#: published figure and relative tolerance: paper / torchvision "GFLOPS" (MACs) rounded
PUBLISHED: dict[str, tuple[float, float]] = {
    "resnet18": (1.814e9, 0.001), "resnet50": (4.09e9, 0.001), "vgg16": (15.47e9, 0.001),
    "mobilenetv2": (300e6, 0.01), "alexnet": (0.71e9, 0.01), "inceptionv3": (5.71e9, 0.02),
    "squeezenet": (0.82e9, 0.01), "efficientnetv2": (8.37e9, 0.001),
}

ELEMENTWISE = {"relu", "relu6", "batchnorm", "tanh", "add", "softmax", "silu", "sigmoid", "mul"}
POOLS = {"maxpool", "avgpool"}


def macs(layers: tuple[Layer, ...], op: str | None = None) -> int:
    return sum(l.kernel.macs * l.count for l in layers if l.kernel is not None and (op is None or l.op == op))


@pytest.fixture(scope="module")
def built() -> dict[str, tuple[Layer, ...]]:
    return {name: network(name, 1, 8) for name in PRESETS}


# ----------------------------------------------------------------------------- every preset
def test_registry_lists_the_presets():
    assert sorted(PRESETS) == names()
    with pytest.raises(KeyError):
        network("no_such_net")


@pytest.mark.parametrize("name", PRESETS)
def test_builds_with_positive_macs(built, name):
    layers = built[name]
    assert layers and all(isinstance(l, Layer) for l in layers)
    array = [l for l in layers if l.on_array]
    assert array
    for layer in array:
        assert layer.kernel.macs > 0 and layer.count >= 1, layer.name
    for layer in layers:
        if not layer.on_array:
            assert layer.elements > 0, layer.name
    assert len({l.name for l in layers}) == len(layers), "layer names are unique"
    assert len(layers) < 600


@pytest.mark.parametrize("name", PRESETS)
def test_bits_reach_the_kernels(name):
    for layer in network(name, 1, 4):
        if layer.kernel is not None:
            assert all(t.bits == 4 for t in layer.kernel.inputs), layer.name


# ----------------------------------------------------------------------------- shapes chain
def _subset_sums(values: list[int], cap: int) -> set[int]:
    sums = {0}
    for v in values:
        sums |= {s + v for s in sums if s + v <= cap}
    return sums


def _check_cnn_chain(layers: tuple[Layer, ...], image: tuple[int, int, int], batch: int) -> None:
    """Every conv and pool reads a tensor produced earlier (or a channel concat of
    produced tensors of one spatial size), every fc a flattened one; element-wise PPU
    ops touch the tensor just produced. A pool's output size is revealed by the layer
    that reads it: its channels are the pool's, its height and width at most the input's."""
    known: list[tuple[int, int, int]] = [image]       # exact (C, H, W) of produced tensors
    pooled: list[tuple[int, int, int]] = []           # pooled tensors: (C, <= H, <= W)

    def available(c: int, h: int, w: int) -> bool:
        cands = [t[0] for t in known if t[1:] == (h, w)] + [t[0] for t in pooled if t[1] >= h and t[2] >= w]
        return c in _subset_sums(cands, c)

    last: tuple[int, int, int] | None = image         # None right after a pool
    for layer in layers:
        if layer.kernel is not None and layer.kernel.name == "conv2d":
            n, c, h, w = layer.kernel.tensor("X").shape
            assert n == batch, layer.name
            assert available(c, h, w), f"{layer.name}: input {c}x{h}x{w} is not a produced tensor"
            known.append((c, h, w))
            last = layer.kernel.tensor("Y").shape[1:]
            known.append(last)
        elif layer.kernel is not None:  # fc: a GEMM over the flattened activation
            b, m, k = layer.kernel.tensor("A").shape
            assert (b, m) == (1, batch), layer.name
            flat = {prod(t) for t in known}
            flat |= {t[0] * s * s for t in pooled for s in range(1, t[1] + 1)}
            assert k in flat, f"{layer.name}: K={k} is no produced tensor flattened"
            last = (layer.kernel.tensor("Y").shape[2], 1, 1)
            known.append(last)
        elif layer.op in POOLS:
            per_image, rem = divmod(layer.elements, batch)
            assert rem == 0, layer.name
            src = [(per_image // (h * w), h, w) for h, w in {t[1:] for t in known}
                   if per_image % (h * w) == 0 and available(per_image // (h * w), h, w)]
            assert src, f"{layer.name}: pools no produced tensor"
            pooled.extend(src)
            last = None
        else:
            assert layer.op in ELEMENTWISE, layer.op
            if layer.op == "mul" and last is not None and layer.elements != batch * prod(last):
                # squeeze-and-excitation's scale: the (C, 1, 1) gate times a produced C x H x W tensor
                hits = [t for t in known if t[0] == last[0] and batch * prod(t) == layer.elements]
                assert hits, layer.name
                last = hits[-1]
            if last is None:  # right after a pool: the op reveals the pooled size
                hits = [(t[0], s, s) for t in pooled for s in range(1, t[1] + 1)
                        if layer.elements == batch * t[0] * s * s]
                assert hits, layer.name
                last = hits[0]
                known.append(last)
            assert layer.elements == batch * prod(last), layer.name


@pytest.mark.parametrize("name", sorted(CNNS))
@pytest.mark.parametrize("batch", [1, 2])
def test_cnn_shapes_chain(name, batch):
    _check_cnn_chain(network(name, batch, 8), CNNS[name], batch)


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transformer_shapes_chain(built, name):
    """Each GEMM's left operand has as many elements as a tensor produced before it,
    and every attention pair agrees on sequence and head sizes."""
    layers = built[name]
    produced: set[int] = set()
    qk = None
    for layer in layers:
        if layer.kernel is None:
            produced.add(layer.elements)
            continue
        a = layer.kernel.tensor("A").size
        if layer.name == "pooler.dense":  # BERT's pooler reads the first ([CLS]) token of each sequence
            a *= 16
        assert a in produced, f"{layer.name}: its input ({a} elements) was never produced"
        dims = {d.name: d.bound for d in layer.kernel.dims}
        if layer.op == "attention_qk":
            qk = dims
        if layer.op == "attention_av":
            assert (dims["b"], dims["m"], dims["k"], dims["n"]) == (qk["b"], qk["m"], qk["n"], qk["k"])
        produced.add(layer.kernel.tensor("Y").size)


def test_deepbench_speech_convs_chain(built):
    """DeepSpeech's first conv (700x161 -> 341x79 with 32 filters) feeds the second."""
    first, second = (l for l in built["deepbench"] if l.op == "conv2d" and l.name.startswith(("conv_700", "conv_341")))
    assert first.kernel.tensor("Y").shape == second.kernel.tensor("X").shape == (1, 32, 79, 341)


# ----------------------------------------------------------------------------- MAC totals
@pytest.mark.parametrize("name", sorted(EXACT_MACS))
def test_cnn_total_macs(built, name):
    total = macs(built[name])
    assert total == EXACT_MACS[name]
    if name in PUBLISHED:
        ref, tol = PUBLISHED[name]
        assert abs(total - ref) <= tol * ref


def test_lenet_by_hand(built):
    c1, c3, c5 = 6 * 25 * 28 * 28, 16 * 6 * 25 * 10 * 10, 120 * 16 * 25
    assert macs(built["lenet"]) == c1 + c3 + c5 + 120 * 84 + 84 * 10


def test_mobilenetv2_depthwise(built):
    dw = [l for l in built["mobilenetv2"] if l.op == "depthwise"]
    assert len(dw) == 17  # one per inverted-residual block (Table 2: n summed)
    for layer in dw:
        k = layer.kernel
        assert k.name == "conv2d"
        dims = {d.name: d.bound for d in k.dims}
        channels = k.tensor("X").shape[1]
        assert dims["g"] == channels == k.tensor("Y").shape[1]
        assert dims["oc"] == dims["ic"] == 1
        assert (dims["kh"], dims["kw"]) == (3, 3)
    assert not [l for l in built["mobilenetv2"] if l.op == "group_conv"]


def test_resnet50_is_v15(built):
    """torchvision v1.5: the stride-2 sits in conv2 (3x3) of layer2.0."""
    by_name = {l.name: l for l in built["resnet50"]}
    conv1, conv2 = by_name["layer2.0.conv1"].kernel, by_name["layer2.0.conv2"].kernel
    assert conv1.tensor("Y").shape[2:] == (56, 56)
    assert conv2.tensor("Y").shape[2:] == (28, 28)


def test_inceptionv3_asymmetric_padding(built):
    by_name = {l.name: l for l in built["inceptionv3"]}
    k17 = by_name["Mixed_6b.branch7x7_2.conv"].kernel
    k71 = by_name["Mixed_6b.branch7x7_3.conv"].kernel
    assert [(d.name, d.bound) for d in k17.dims if d.name in ("kh", "kw")] == [("kh", 1), ("kw", 7)]
    assert k17.tensor("X").bias == (0, 0, 0, -3) and k71.tensor("X").bias == (0, 0, -3, 0)
    assert k17.tensor("Y").shape == (1, 128, 17, 17) and k71.tensor("Y").shape == (1, 192, 17, 17)
    assert "AuxLogits" not in " ".join(by_name)


def test_ppu_ops_present(built):
    ops = {name: {l.op for l in built[name] if not l.on_array} for name in PRESETS}
    assert {"batchnorm", "relu", "maxpool", "avgpool", "add", "softmax"} <= ops["resnet50"]
    assert {"relu6", "add", "softmax"} <= ops["mobilenetv2"]
    assert {"layernorm", "gelu", "softmax", "add", "embedding"} <= ops["bert"]
    assert {"layernorm", "gelu", "softmax", "embedding"} <= ops["gpt2"]
    assert {"rmsnorm", "silu", "mul", "rope", "softmax", "embedding"} <= ops["llama7b"]
    assert built["resnet18"][-1].op == "softmax" and built["vgg16"][-1].op == "softmax"


# ----------------------------------------------------------------------------- transformers by hand
def _bert_macs(batch: int) -> int:
    layers, h, f, heads, s = 12, 768, 3072, 12, 16
    t = batch * s
    proj = 4 * t * h * h + 2 * t * h * f
    attn = 2 * batch * heads * s * s * (h // heads)
    return layers * (proj + attn) + batch * h * h  # + pooler


def _gpt2_macs(batch: int) -> int:
    layers, h, f, heads, v, prompt = 12, 768, 3072, 12, 50257, 1000

    def one_pass(q: int, kv: int) -> int:
        t = batch * q
        proj = t * 3 * h * h + t * h * h + 2 * t * h * f
        attn = 2 * batch * heads * q * kv * (h // heads)
        return layers * (proj + attn) + batch * h * v  # LM head on the last position

    return one_pass(prompt, prompt) + one_pass(1, prompt + 1)


def _llama_macs(batch: int) -> int:
    layers, h, f, heads, v, ctx = 32, 4096, 11008, 32, 32000, 1000
    proj = layers * batch * (4 * h * h + 3 * h * f) + batch * h * v
    attn = layers * 2 * batch * heads * (ctx + 1) * (h // heads)
    return proj + attn


@pytest.mark.parametrize("name, formula", [("bert", _bert_macs), ("gpt2", _gpt2_macs), ("llama7b", _llama_macs)])
@pytest.mark.parametrize("batch", [1, 32])
def test_transformer_macs_by_hand(name, formula, batch):
    assert macs(network(name, batch, 8)) == formula(batch)


def test_transformer_totals():
    assert _bert_macs(1) == 1_364_262_912
    assert _gpt2_macs(1) == 103_547_235_840
    assert _llama_macs(1) == 6_869_483_520
    # LLaMA-7B decode: ~6.5e9 MACs of block projections + the LM head + attention over 1001 keys
    assert 32 * (4 * 4096**2 + 3 * 4096 * 11008) == 6_476_005_376


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_batch_scales_projections(name):
    one, many = network(name, 1, 8), network(name, 32, 8)
    assert macs(many, "fc") == 32 * macs(one, "fc")
    assert len(one) == len(many)
    for a, b in zip(one, many):
        if a.op == "fc":
            assert b.kernel.tensor("A").shape[1] == 32 * a.kernel.tensor("A").shape[1]


def test_llama7b_stays_short(built):
    layers = built["llama7b"]
    assert len(layers) < 50
    assert sum(l.count for l in layers if l.on_array) == 32 * 9 + 1  # q k v qk av o gate up down, lm_head
    qk = next(l for l in layers if l.op == "attention_qk")
    dims = {d.name: d.bound for d in qk.kernel.dims}
    assert (dims["b"], dims["m"], dims["n"], dims["k"]) == (32, 1, 1001, 128)


def test_gpt2_prefill_then_decode(built):
    qks = [l for l in built["gpt2"] if l.op == "attention_qk"]
    assert [tuple(d.bound for d in l.kernel.dims) for l in qks] == [(12, 1000, 1000, 64), (12, 1, 1001, 64)]
    heads = [l for l in built["gpt2"] if l.name.endswith("lm_head")]
    assert [tuple(d.bound for d in l.kernel.dims) for l in heads] == [(1, 1, 50257, 768)] * 2


def test_deepbench_shapes(built):
    dims = [tuple(d.bound for d in l.kernel.dims) for l in built["deepbench"] if l.op == "gemm"]
    assert (1, 5124, 700, 2048) in dims and (1, 35, 700, 2048) in dims and (1, 3072, 1, 1024) in dims
    assert 8 <= len(built["deepbench"]) <= 12
    two = network("deepbench", 2, 8)
    assert macs(two) == 2 * macs(built["deepbench"])


# ----------------------------------------------------------------------------- config presets
def _network_presets() -> list[str]:
    return sorted(p.stem for p in CONF_WORKLOAD.glob("*.yaml") if "base_network" in p.read_text())


def test_every_network_has_a_preset():
    assert _network_presets() == sorted(NETWORKS)


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_preset_composes(name):
    text = (CONF_WORKLOAD / f"{name}.yaml").read_text()
    assert text.startswith("# ") and len(text.splitlines()[0]) > 20  # a one-line description
    cfg = lego_build.compose([f"workload={name}"])
    assert cfg.workload.network in NETWORKS
    assert cfg.workload.name == cfg.workload.network == name
    wl = workload_from_config(cfg.workload)
    assert isinstance(wl, Workload) and wl.macs == macs(network(name, 1, 8))


def test_preset_batch_override():
    cfg = lego_build.compose(["workload=llama7b", "workload.batch=32"])
    assert workload_from_config(cfg.workload).macs == _llama_macs(32)
