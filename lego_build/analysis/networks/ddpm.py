"""The DDPM noise-prediction UNet for CIFAR-10 (32x32): one denoising step.

Source of the shapes: Ho, Jain, Abbeel, "Denoising Diffusion Probabilistic Models",
NeurIPS 2020, Appendix B (a PixelCNN++-like UNet on a Wide ResNet backbone: four feature
map resolutions 32, 16, 8, 4, two convolutional residual blocks per resolution,
self-attention at 16x16, group normalisation, the timestep as a Transformer sinusoidal
embedding added into each residual block; 35.7 M parameters for CIFAR-10) with the sizes
of the authors' CIFAR-10 configuration: ``ch = 128``, ``ch_mult = (1, 2, 2, 2)``,
``num_res_blocks = 2``, ``attn_resolutions = (16,)``, GroupNorm with 32 groups, swish
(SiLU) activations, resampling with convolutions. Layer names follow the PyTorch port of
that code (``down.<level>.block.<i>.conv1``, ``mid.attn_1``, ``up.<level>.upsample.conv``,
``conv_out``).

* Timestep embedding: the sinusoidal embedding of ``t`` (128 values, an ``embedding`` PPU
  op), dense 128 -> 512, SiLU, dense 512 -> 512.
* Residual block: GroupNorm, SiLU, 3x3 conv; SiLU of the embedding, dense 512 -> out
  channels, added to every pixel (``add`` over the feature map); GroupNorm, SiLU (dropout
  is the identity at inference), 3x3 conv; a 1x1 conv (``nin_shortcut``) on the input when
  the channels change; the residual add.
* Attention block (single head, the full channel width): GroupNorm, Q, K, V projections
  (1x1 "network-in-network" layers: fc GEMMs over the ``H * W`` tokens), ``Q K^T`` and
  ``P V`` as batched GEMMs (one head per image), softmax (the ``C^-1/2`` scale folded in),
  output projection, residual add.
* Down path: a 3x3 conv from 3 to 128 channels, then per level two residual blocks (each
  followed by attention at 16x16) and, except at the last level, a stride-2 3x3 conv
  (padded at the bottom and right only, as TensorFlow's ``SAME``). Middle at 4x4: residual
  block, attention, residual block. Up path: per level three residual blocks, each reading
  the channel concatenation of the running map and the matching skip tensor (attention
  after each at 16x16), then nearest 2x upsampling (an ``upsample`` PPU op over the output
  elements) and a 3x3 conv, except at the top level. Out: GroupNorm, SiLU, 3x3 conv to 3
  channels (the predicted noise).
* Seed 004 (the LEGO thesis, Section 6, Table 6.1) reports DDPM's utilisation and GOP/s
  but not its resolution; the paper's CIFAR-10 model is the one taken here.
* Total MACs (batch 1): 6,053,953,536 in the convs and dense layers plus 167,903,232 in
  the attention GEMMs, 6,221,856,768 in all. The published figure is 6.1 G MACs for this
  model (Fang, Ma, Wang, "Structural Pruning for Diffusion Models", NeurIPS 2023: the
  pretrained CIFAR-10 DDPM, 35.7M parameters, 6.1G MACs). The 6.05 G of convs and dense
  layers rounds to it; the attention's matrix products are evidently not in that count
  (with them: 6.2 G), as usual for module-hook profilers. The conv and dense weights come
  to 35.69 M, Appendix B's 35.7M with the biases and norms.
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder, Shape
from lego_build.ir.workload import Layer

CH, CH_MULT, NUM_RES_BLOCKS, ATTN_RESOLUTIONS, TEMB = 128, (1, 2, 2, 2), 2, (16,), 512
IMAGE: Shape = (3, 32, 32)
RESNET_NAMES = ("norm1", "conv1", "temb_proj", "norm2", "conv2", "nin_shortcut")


def timestep_embedding(net: NetBuilder, name: str, dim: int, temb: int) -> None:
    """Sinusoidal embedding of the timestep (``dim`` values), dense, SiLU, dense to ``temb``."""
    b = net.batch
    net.ppu(f"{name}.sinusoidal", "embedding", b * dim)
    net.matmul(f"{name}.dense.0", b, temb, dim, op="fc")
    net.ppu(f"{name}.act", "silu", b * temb)
    net.matmul(f"{name}.dense.1", b, temb, temb, op="fc")


def resnet_block(net: NetBuilder, name: str, out_ch: int, temb: int, x: Shape | None = None,
                 names: tuple[str, ...] = RESNET_NAMES) -> Shape:
    """Residual block on ``x`` (default: the current map) with the timestep embedding added
    after the first conv (DDPM, and LDM's UNet); ``names``: of its norms, convs, projection."""
    x = x or net.shape
    norm1, conv1, temb_proj, norm2, conv2, shortcut = names
    net.shape = x
    net.ppu(f"{name}.{norm1}", "groupnorm")
    net.ppu(f"{name}.{norm1}.act", "silu")
    net.conv(f"{name}.{conv1}", out_ch, 3, pad=1)
    net.ppu(f"{name}.{temb_proj}.act", "silu", net.batch * temb)
    net.matmul(f"{name}.{temb_proj}", net.batch, out_ch, temb, op="fc")
    net.ppu(f"{name}.{temb_proj}.add", "add")  # broadcast over H x W
    net.ppu(f"{name}.{norm2}", "groupnorm")
    net.ppu(f"{name}.{norm2}.act", "silu")
    h = net.conv(f"{name}.{conv2}", out_ch, 3, pad=1)
    if x[0] != out_ch:
        net.conv(f"{name}.{shortcut}", out_ch, 1, shape=x)
    net.shape = h
    net.add(f"{name}.add")
    return h


def _attn_block(net: NetBuilder, name: str) -> None:
    c, h, w = x = net.shape
    b, n = net.batch, h * w
    net.ppu(f"{name}.norm", "groupnorm")
    for proj in ("q", "k", "v"):
        net.matmul(f"{name}.{proj}", b * n, c, c, op="fc")
    net.matmul(f"{name}.qk", n, n, c, batch=b, op="attention_qk")
    net.ppu(f"{name}.softmax", "softmax", b * n * n)
    net.matmul(f"{name}.av", n, c, n, batch=b, op="attention_av")
    net.matmul(f"{name}.proj_out", b * n, c, c, op="fc")
    net.shape = x
    net.add(f"{name}.add")


def concat_skip(net: NetBuilder, skip: Shape) -> Shape:
    """The running map and a skip tensor of the same size, concatenated along the channels."""
    assert skip[1:] == net.shape[1:], f"skip {skip} does not match the map {net.shape}"
    return net.concat_channels(net.shape, skip)


def upsample(net: NetBuilder, name: str) -> Shape:
    """Nearest-neighbour 2x upsampling on the PPU (elements: the output it writes)."""
    c, h, w = net.shape
    net.shape = (c, 2 * h, 2 * w)
    net.ppu(name, "upsample")
    return net.shape


def ddpm_cifar10(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("ddpm", batch, bits, IMAGE)
    timestep_embedding(net, "temb", CH, TEMB)
    skips = [net.conv("conv_in", CH, 3, pad=1)]
    levels = len(CH_MULT)
    for i, mult in enumerate(CH_MULT):
        for j in range(NUM_RES_BLOCKS):
            resnet_block(net, f"down.{i}.block.{j}", CH * mult, TEMB)
            if net.shape[1] in ATTN_RESOLUTIONS:
                _attn_block(net, f"down.{i}.attn.{j}")
            skips.append(net.shape)
        if i != levels - 1:
            skips.append(net.conv(f"down.{i}.downsample.conv", net.shape[0], 3, stride=2, pad=(0, 0, 1, 1)))
    resnet_block(net, "mid.block_1", net.shape[0], TEMB)
    _attn_block(net, "mid.attn_1")
    resnet_block(net, "mid.block_2", net.shape[0], TEMB)
    for i in reversed(range(levels)):
        for j in range(NUM_RES_BLOCKS + 1):
            resnet_block(net, f"up.{i}.block.{j}", CH * CH_MULT[i], TEMB, x=concat_skip(net, skips.pop()))
            if net.shape[1] in ATTN_RESOLUTIONS:
                _attn_block(net, f"up.{i}.attn.{j}")
        if i != 0:
            upsample(net, f"up.{i}.upsample")
            net.conv(f"up.{i}.upsample.conv", net.shape[0], 3, pad=1)
    assert not skips
    net.ppu("norm_out", "groupnorm")
    net.ppu("norm_out.act", "silu")
    net.conv("conv_out", IMAGE[0], 3, pad=1)
    return tuple(net.layers)
