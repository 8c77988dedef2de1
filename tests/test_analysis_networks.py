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
           "lenet", "bert", "gpt2", "llama7b", "deepbench", "coatnet", "ddpm", "stable_diffusion")

#: input image (C, H, W) of every CNN preset
CNNS: dict[str, tuple[int, int, int]] = {
    "resnet18": (3, 224, 224), "resnet50": (3, 224, 224), "mobilenetv2": (3, 224, 224),
    "alexnet": (3, 224, 224), "vgg16": (3, 224, 224), "inceptionv3": (3, 299, 299),
    "squeezenet": (3, 224, 224), "lenet": (1, 32, 32), "efficientnetv2": (3, 384, 384),
}
TRANSFORMERS = ("bert", "gpt2", "llama7b")
#: input image / latent (C, H, W) of the conv + attention presets
HYBRIDS: dict[str, tuple[int, int, int]] = {
    "coatnet": (3, 224, 224), "ddpm": (3, 32, 32), "stable_diffusion": (4, 64, 64),
}

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
    "coatnet": 4_224_826_368,  # incl. 154,893,312 in the attention GEMMs
    "ddpm": 6_221_856_768,  # one denoising step, incl. 167,903,232 in the attention GEMMs
    "stable_diffusion": 401_636_720_640,  # one UNet step, incl. 63,026,135,040 in the attention GEMMs
}
#: published figure and relative tolerance: paper / torchvision "GFLOPS" (MACs) rounded
PUBLISHED: dict[str, tuple[float, float]] = {
    "resnet18": (1.814e9, 0.001), "resnet50": (4.09e9, 0.001), "vgg16": (15.47e9, 0.001),
    "mobilenetv2": (300e6, 0.01), "alexnet": (0.71e9, 0.01), "inceptionv3": (5.71e9, 0.02),
    "squeezenet": (0.82e9, 0.01), "efficientnetv2": (8.37e9, 0.001),
    "coatnet": (4.2e9, 0.012),  # Table 4's "4.2G FLOPs" (multiply-adds): half its last digit, 0.05 / 4.2
}
#: published MACs that leave the attention's matrix products out (convs and linear layers only, as
#: module-hook profilers count), and the tolerance: half a unit in the figure's last digit
PUBLISHED_WITHOUT_ATTENTION: dict[str, tuple[float, float]] = {
    "ddpm": (6.1e9, 0.05e9),  # Fang, Ma, Wang, NeurIPS 2023: CIFAR-10 DDPM, 35.7M params, 6.1G MACs
    "stable_diffusion": (339e9, 0.5e9),  # Kim et al. (BK-SDM), ECCV 2024: SD v1.4 U-Net, 0.86B params, 339G MACs
}
#: published parameter counts and relative tolerance, checked on the conv and fc weights
PUBLISHED_PARAMS: dict[str, tuple[float, float]] = {
    "ddpm": (35.7e6, 0.002),  # Ho et al. 2020, Appendix B
    "stable_diffusion": (860e6, 0.002),  # Rombach et al. 2022 / the v1 model card: an 860M UNet
    "coatnet": (25e6, 0.04),  # Dai et al. 2021, Table 4's 25M; the paper leaves SE and head widths open
}

ELEMENTWISE = {"relu", "relu6", "batchnorm", "tanh", "add", "softmax", "silu", "sigmoid", "mul"}
NORMS_AND_ACTIVATIONS = {"groupnorm", "layernorm", "gelu"}
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


def _check_hybrid_chain(layers: tuple[Layer, ...], image: tuple[int, int, int], batch: int,
                        inputs: tuple[tuple[int, int, int], ...] = ()) -> tuple[int, ...]:
    """Convs, token GEMMs and attention in one net: every layer reads what an earlier one produced.

    Tensors are tracked by element count, and by (C, H, W) where one is known (tokens of an
    H x W map with C features count as that map). A conv reads one produced map or the channel
    concat of two (a UNet skip); an fc reads a produced (K, H, W) as batch x H x W rows of K; an
    attention GEMM reads a produced tensor of its size; a PPU op touches a produced tensor, a
    concat of two maps or (GEGLU) half of a projection. Pools and upsampling derive their outputs.
    Returns the output shape of the last array layer."""
    sizes: set[int] = set()
    shapes: dict[int, set[tuple[int, int, int]]] = {}

    def produce(size: int, shape: tuple[int, int, int] | None = None) -> None:
        sizes.add(size)
        if shape is not None:
            shapes.setdefault(size, set()).add(shape)

    def concats(elements: int) -> set[tuple[int, int, int]]:
        known = {s for group in shapes.values() for s in group}
        return {(a[0] + b[0], *a[1:]) for a in known for b in known
                if a[1:] == b[1:] and batch * (a[0] + b[0]) * a[1] * a[2] == elements}

    for shape in (image, *inputs):
        produce(batch * prod(shape), shape)
    last: tuple[int, ...] = ()
    for layer in layers:
        k = layer.kernel
        if k is not None and k.name == "conv2d":
            n, c, h, w = k.tensor("X").shape
            assert n == batch, layer.name
            ok = (c, h, w) in shapes.get(batch * c * h * w, set()) or (c, h, w) in concats(batch * c * h * w)
            assert ok, f"{layer.name}: input {c}x{h}x{w} is not a produced map or a concat of two"
            last = k.tensor("Y").shape
            produce(prod(last), last[1:])
        elif k is not None and layer.op == "fc":
            b, t, kk = k.tensor("A").shape
            assert b == 1, layer.name
            src = [s for s in shapes.get(t * kk, ()) if s[0] == kk and batch * s[1] * s[2] == t]
            assert src, f"{layer.name}: reads {t} rows of {kk}, no produced tensor"
            last = k.tensor("Y").shape
            produce(prod(last), (last[2], src[0][1], src[0][2]))
        elif k is not None:
            assert layer.op in ("attention_qk", "attention_av"), layer.op
            assert k.tensor("A").size in sizes, f"{layer.name}: its input was never produced"
            last = k.tensor("Y").shape
            produce(prod(last))
        elif layer.op == "embedding":  # the timestep's sinusoid: computed from the step index alone
            produce(layer.elements, (layer.elements // batch, 1, 1))
        elif layer.op in POOLS:
            src = shapes.get(layer.elements, set())
            assert src, f"{layer.name}: pools no produced map"
            for c, h, w in src:
                produce(batch * c * (h // 2) * (w // 2), (c, h // 2, w // 2))  # 2x2, stride 2
                produce(batch * c, (c, 1, 1))  # global
        elif layer.op == "upsample":
            src = shapes.get(layer.elements // 4, set())
            assert src, f"{layer.name}: upsamples no produced map"
            for c, h, w in src:
                produce(layer.elements, (c, 2 * h, 2 * w))
        else:
            assert layer.op in ELEMENTWISE | NORMS_AND_ACTIVATIONS, layer.op
            e = layer.elements
            halves = {(c // 2, h, w) for c, h, w in shapes.get(2 * e, ())}
            for shape in halves if layer.op == "gelu" else ():  # GEGLU: the gate half of the projection
                produce(e, shape)
            if e in sizes:
                continue
            cat = concats(e)
            assert cat, f"{layer.name}: touches {e} elements, no produced tensor"
            for shape in cat:
                produce(e, shape)
    return last


@pytest.mark.parametrize("name", sorted(HYBRIDS))
@pytest.mark.parametrize("batch", [1, 2])
def test_hybrid_shapes_chain(name, batch):
    inputs = ((768, 77, 1),) if name == "stable_diffusion" else ()  # the CLIP text context
    last = _check_hybrid_chain(network(name, batch, 8), HYBRIDS[name], batch, inputs)
    if name == "coatnet":
        assert last == (1, batch, 1000)
    else:  # the predicted noise has the input's shape
        assert last == (batch, *HYBRIDS[name])


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

    return one_pass(1, prompt + 1)  # the decode step only (seed 004 §6: generating one token)


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
    assert _gpt2_macs(1) == 141_982_464
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


def test_gpt2_generates_one_token_over_the_input_cache(built):
    qks = [l for l in built["gpt2"] if l.op == "attention_qk"]
    assert [tuple(d.bound for d in l.kernel.dims) for l in qks] == [(12, 1, 1001, 64)]
    assert all(l.kernel.tensor("A").shape[1] == 1 for l in built["gpt2"] if l.op == "fc")  # one token
    heads = [l for l in built["gpt2"] if l.name.endswith("lm_head")]
    assert [tuple(d.bound for d in l.kernel.dims) for l in heads] == [(1, 1, 50257, 768)]


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


# ----------------------------------------------------------------------------- conv + attention presets
def _attention_macs(layers: tuple[Layer, ...]) -> int:
    return macs(layers, "attention_qk") + macs(layers, "attention_av")


def _weights(layers: tuple[Layer, ...]) -> int:
    """Conv and fc weight elements (attention GEMMs multiply two activations: no weights)."""
    return sum((l.kernel.tensor("W") if l.kernel.name == "conv2d" else l.kernel.tensor("B")).size * l.count
               for l in layers if l.kernel is not None and (l.kernel.name == "conv2d" or l.op == "fc"))


@pytest.mark.parametrize("name", sorted(PUBLISHED_WITHOUT_ATTENTION))
def test_diffusion_macs_against_published(built, name):
    ref, tol = PUBLISHED_WITHOUT_ATTENTION[name]
    layers = built[name]
    without = macs(layers) - _attention_macs(layers)
    assert abs(without - ref) <= tol, f"{without:,} vs {ref:,.0f}"


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_weights_against_published_params(built, name):
    ref, tol = PUBLISHED_PARAMS[name]
    assert abs(_weights(built[name]) - ref) <= tol * ref


# by hand: 3x3 convs, 1x1 convs and fc layers as (in, out, output pixels); attention as 4 projections + 2 GEMMs
def _resblock(cin: int, cout: int, hw: int, temb: int) -> int:
    n = hw * hw
    return 9 * cin * cout * n + 9 * cout * cout * n + temb * cout + (cin * cout * n if cin != cout else 0)


def _self_attention(c: int, n: int) -> int:
    return 4 * n * c * c + 2 * n * n * c


def _ddpm_macs(batch: int) -> int:
    """Ho et al.'s CIFAR-10 UNet from its residual blocks (in, out, side) as derived by hand."""
    temb = 512
    blocks = [(128, 128, 32)] * 2 + [(128, 256, 16), (256, 256, 16)] + [(256, 256, 8)] * 2 + [(256, 256, 4)] * 2
    blocks += [(256, 256, 4)] * 2  # middle
    blocks += [(512, 256, 4)] * 3 + [(512, 256, 8)] * 3 + [(512, 256, 16)] * 2 + [(384, 256, 16)]
    blocks += [(384, 128, 32), (256, 128, 32), (256, 128, 32)]
    convs = 9 * 3 * 128 * 32**2 + 9 * 128 * 3 * 32**2  # conv_in, conv_out
    convs += 9 * 128**2 * 16**2 + 9 * 256**2 * 8**2 + 9 * 256**2 * 4**2  # stride-2 downsampling
    convs += 9 * 256**2 * 8**2 + 9 * 256**2 * 16**2 + 9 * 256**2 * 32**2  # after each 2x upsampling
    attention = 5 * _self_attention(256, 16 * 16) + _self_attention(256, 4 * 4)  # 2 down + 3 up at 16x16, middle
    per_image = convs + sum(_resblock(*b, temb) for b in blocks) + attention + 128 * temb + temb * temb
    return batch * per_image


def _sd_macs(batch: int) -> int:
    """The SD v1 UNet from its residual blocks and spatial transformers as derived by hand."""
    temb, ctx, ctx_dim = 1280, 77, 768
    blocks = [(320, 320, 64)] * 2 + [(320, 640, 32), (640, 640, 32), (640, 1280, 16), (1280, 1280, 16)]
    blocks += [(1280, 1280, 8)] * 2 + [(1280, 1280, 8)] * 2  # last level, middle
    blocks += [(2560, 1280, 8)] * 3 + [(2560, 1280, 16)] * 2 + [(1920, 1280, 16)]
    blocks += [(1920, 640, 32), (1280, 640, 32), (960, 640, 32), (960, 320, 64), (640, 320, 64), (640, 320, 64)]

    def transformer(c: int, hw: int) -> int:
        n = hw * hw
        cross = 2 * n * c * c + 2 * ctx * ctx_dim * c + 2 * n * ctx * c  # Q, out; K, V of the text; 2 GEMMs
        return 2 * n * c * c + _self_attention(c, n) + cross + 12 * n * c * c  # proj_in/out, GEGLU 8c + 4c

    transformers = 5 * (transformer(320, 64) + transformer(640, 32) + transformer(1280, 16)) + transformer(1280, 8)
    convs = 9 * 4 * 320 * 64**2 + 9 * 320 * 4 * 64**2  # conv_in, conv_out
    convs += 9 * 320**2 * 32**2 + 9 * 640**2 * 16**2 + 9 * 1280**2 * 8**2  # stride-2 downsampling
    convs += 9 * 1280**2 * 16**2 + 9 * 1280**2 * 32**2 + 9 * 640**2 * 64**2  # after each 2x upsampling
    per_image = convs + sum(_resblock(*b, temb) for b in blocks) + transformers + 320 * temb + temb * temb
    return batch * per_image


@pytest.mark.parametrize("name, formula", [("ddpm", _ddpm_macs), ("stable_diffusion", _sd_macs)])
@pytest.mark.parametrize("batch", [1, 2])
def test_diffusion_macs_by_hand(name, formula, batch):
    assert macs(network(name, batch, 8)) == formula(batch)


@pytest.mark.parametrize("name", sorted(HYBRIDS))
def test_hybrid_batch_scales(name):
    one, two = network(name, 1, 8), network(name, 2, 8)
    assert len(one) == len(two) and macs(two) == 2 * macs(one)
    assert all(b.elements == 2 * a.elements for a, b in zip(one, two) if not a.on_array)


def _qk_dims(layers: tuple[Layer, ...]) -> list[tuple[int, ...]]:
    return [tuple(d.bound for d in l.kernel.dims) for l in layers if l.op == "attention_qk"]


def test_coatnet_stages(built):
    layers = built["coatnet"]
    by_name = {l.name: l for l in layers}
    assert by_name["s0.1.conv"].kernel.tensor("Y").shape == (1, 64, 112, 112)
    assert by_name["s1.1.project"].kernel.tensor("Y").shape == (1, 96, 56, 56)
    assert by_name["s2.2.project"].kernel.tensor("Y").shape == (1, 192, 28, 28)
    assert len([l for l in layers if l.op == "depthwise"]) == 2 + 3  # L1 + L2 MBConvs
    # L3 = 5 blocks at 14x14 with 384 / 32 = 12 heads, L4 = 2 blocks at 7x7 with 24 heads; (b, m, n, k)
    assert _qk_dims(layers) == [(12, 196, 196, 32)] * 5 + [(24, 49, 49, 32)] * 2
    assert _attention_macs(layers) == 2 * (5 * 196**2 * 384 + 2 * 49**2 * 768) == 154_893_312
    # relative attention: the position bias is added to every score before the softmax
    for i, layer in enumerate(layers):
        if layer.op == "attention_qk":
            bias, softmax = layers[i + 1], layers[i + 2]
            assert (bias.op, softmax.op) == ("add", "softmax") and "rel_pos" in bias.name
            assert bias.elements == softmax.elements == layer.kernel.tensor("Y").size
    # stage-opening blocks: Proj(Pool(x)) shortcuts, stride 2 in the MBConvs' depthwise conv
    assert by_name["s1.0.shortcut.proj"].kernel.tensor("X").shape == (1, 64, 56, 56)
    assert by_name["s3.0.shortcut.proj"].kernel.tensor("X").shape == (1, 192, 14, 14)
    assert by_name["s1.0.dw"].kernel.tensor("Y").shape == (1, 256, 56, 56)
    assert by_name["s3.0.attn.q"].kernel.tensor("A").shape == (1, 196, 192)


def test_ddpm_layout(built):
    layers = built["ddpm"]
    by_name = {l.name: l for l in layers}
    # self-attention (one head over all channels) at 16x16 only, plus the 4x4 middle
    assert _qk_dims(layers) == [(1, 256, 256, 256)] * 2 + [(1, 16, 16, 256)] + [(1, 256, 256, 256)] * 3
    # skip concatenations on the way up
    assert by_name["up.3.block.0.conv1"].kernel.tensor("X").shape == (1, 512, 4, 4)
    assert by_name["up.1.block.2.conv1"].kernel.tensor("X").shape == (1, 384, 16, 16)
    assert by_name["up.0.block.0.conv1"].kernel.tensor("X").shape == (1, 384, 32, 32)
    assert by_name["down.0.downsample.conv"].kernel.tensor("Y").shape == (1, 128, 16, 16)
    assert by_name["temb.dense.0"].kernel.tensor("B").shape == (1, 128, 512)


def test_sd_unet_layout(built):
    layers = built["stable_diffusion"]
    by_name = {l.name: l for l in layers}
    proj_in = [l for l in layers if l.name.endswith("proj_in")]
    assert sum(l.count for l in proj_in) == 16  # 2 x 3 down, 1 middle, 3 x 3 up
    assert len(layers) < 500
    # cross-attention: K and V from the 77 x 768 text context, 8 heads of 320 / 8 = 40 at 64x64
    top = "down_blocks.0.attentions.*.transformer_blocks.0"
    assert by_name[f"{top}.attn2.to_k"].kernel.tensor("A").shape == (1, 77, 768)
    assert tuple(d.bound for d in by_name[f"{top}.attn2.qk"].kernel.dims) == (8, 4096, 77, 40)
    assert tuple(d.bound for d in by_name[f"{top}.attn1.qk"].kernel.dims) == (8, 4096, 4096, 40)
    assert by_name[f"{top}.ff.net.0.proj"].kernel.tensor("Y").shape == (1, 4096, 2 * 4 * 320)  # GEGLU
    assert by_name[f"{top}.ff.net.0.gelu"].elements == 4096 * 4 * 320
    assert by_name["up_blocks.0.resnets.0.conv1"].kernel.tensor("X").shape == (1, 2560, 8, 8)
    assert by_name["up_blocks.3.resnets.0.conv1"].kernel.tensor("X").shape == (1, 960, 64, 64)
    assert by_name["conv_in"].kernel.tensor("X").shape == (1, 4, 64, 64)
    # the self-attention at 64x64 alone: 5 transformers x 2 GEMMs x 4096^2 x 320
    top_self = sum(l.kernel.macs * l.count for l in layers if l.op.startswith("attention")
                   and ".attn1." in l.name and l.name.startswith(("down_blocks.0", "up_blocks.3")))
    assert top_self == 5 * 2 * 4096**2 * 320


def test_hybrid_post_processing_is_kept(built):
    """Norms, activations, softmax, pooling, residual adds and upsampling are PPU layers with elements."""
    ops = {name: {l.op for l in built[name] if not l.on_array} for name in HYBRIDS}
    unet = {"groupnorm", "silu", "softmax", "add", "upsample", "embedding"}
    assert {"batchnorm", "layernorm", "gelu", "softmax", "maxpool", "avgpool", "add", "sigmoid", "mul"} \
        <= ops["coatnet"]
    assert unet <= ops["ddpm"]
    assert unet | {"layernorm", "gelu", "mul"} <= ops["stable_diffusion"]

    def weighted(name: str, op: str) -> int:
        return sum(l.count for l in built[name] if l.op == op)

    # two group norms per residual block (22 in both UNets), one per attention block, one before conv_out
    assert weighted("ddpm", "groupnorm") == 2 * 22 + 6 + 1
    assert weighted("stable_diffusion", "groupnorm") == 2 * 22 + 16 + 1
    assert weighted("stable_diffusion", "layernorm") == 3 * 16
    assert weighted("coatnet", "layernorm") == 2 * 7
    for name in ("ddpm", "stable_diffusion"):
        ups = [l for l in built[name] if l.op == "upsample"]
        assert len(ups) == 3
        for up in ups:  # each writes 4x the map it reads; the conv after it reads what it wrote
            i = built[name].index(up)
            assert built[name][i + 1].kernel.tensor("X").size == up.elements
    for name in HYBRIDS:  # every score matrix goes through a softmax of its size
        scores = sorted((l.kernel.tensor("Y").size, l.count) for l in built[name] if l.op == "attention_qk")
        soft = sorted((l.elements, l.count) for l in built[name] if l.op == "softmax" and ".soft" in l.name
                      and "head" not in l.name)
        assert scores == soft
