"""The Stable Diffusion v1.x UNet at 512x512 (a 4x64x64 latent): one denoising step.

Source of the shapes: Rombach, Blattmann, Lorenz, Esser, Ommer, "High-Resolution Image
Synthesis with Latent Diffusion Models", CVPR 2022 (Section 3.3: the time-conditional
UNet with cross-attention to the conditioning's token sequence; Appendix E: the
text-to-image model's hyperparameters), with the sizes of the released v1 inference configuration
(``v1-inference.yaml``, shared by v1.4 and v1.5): latent 4 channels, ``model_channels =
320``, ``channel_mult = (1, 2, 4, 4)``, two residual blocks per level, attention at the
first three levels (down-sampling factors 1, 2, 4), 8 heads, transformer depth 1,
``context_dim = 768`` (CLIP ViT-L/14's 77 text tokens), GroupNorm with 32 groups. Layer
names follow the Hugging Face ``diffusers`` ``UNet2DConditionModel`` layout
(``down_blocks.<i>.resnets.<j>.conv1``, ``mid_block.attentions.0``,
``up_blocks.<i>.upsamplers.0.conv``, ``conv_out``).

* One UNet forward pass at the configured batch: no classifier-free guidance doubling
  (guidance runs the UNet on a conditional and an unconditional batch: use
  ``workload.batch=2`` for one guided step of one image). The CLIP text encoder and the
  VAE decoder are not included; the 77 x 768 text context is an input.
* Timestep embedding: sinusoidal (320 values), linear 320 -> 1280, SiLU, linear 1280 ->
  1280. Residual blocks as in :mod:`.ddpm` (GroupNorm, SiLU, 3x3 conv, the embedding's
  SiLU and projection added per pixel, GroupNorm, SiLU, 3x3 conv, a 1x1 conv shortcut
  when the channels change, residual add).
* Spatial transformer (v1: 1x1 conv projections): GroupNorm, ``proj_in`` 1x1 conv, then
  on the ``H * W`` tokens: layer norm, self-attention (Q, K, V and output projections as
  fc GEMMs, ``Q K^T`` and ``P V`` as batched GEMMs over batch x 8 heads, softmax with the
  scale folded in), residual add; layer norm, cross-attention (Q from the tokens, K and V
  from the 77 context tokens), residual add; layer norm, GEGLU feed-forward (a projection
  to 2 x 4C, GELU of the gate half, element-wise product, projection back to C), residual
  add; ``proj_out`` 1x1 conv and the residual add of the block's input.
* Down path: 3x3 conv 4 -> 320 at 64x64; per level two residual blocks (each followed by
  a spatial transformer at the first three levels) and, except at the last level, a
  stride-2 3x3 conv. Middle at 8x8: residual block, transformer, residual block. Up path:
  per level three residual blocks reading the channel concatenation of the running map
  and the matching skip tensor (each followed by a transformer at the three
  highest-resolution levels), then, except at the top, nearest 2x upsampling (an
  ``upsample`` PPU op) and a 3x3 conv. Out: GroupNorm, SiLU, 3x3 conv 320 -> 4.
* The transformers of one level are identical (same width, tokens and context), so, as
  in :mod:`.transformers`, each of their layers appears once, with ``count`` = the
  level's transformers (2 down, 3 up) and ``*`` for the index
  (``down_blocks.0.attentions.*.proj_in``), right after the level's first residual
  block. This keeps the list under 500 layers; the totals are those of the unfolded net.
* Total MACs (batch 1): 338,610,585,600 in the convs and linear layers plus
  63,026,135,040 in the attention GEMMs (53.7 G of it the self-attention at 64x64),
  401,636,720,640 in all. The published figure is 339G MACs for one UNet evaluation of
  SD v1.4 at 512x512 (Kim, Song, Castells, Choi, "BK-SDM: A Lightweight, Fast, and Cheap
  Version of Stable Diffusion", ECCV 2024: the SDM-v1.4 U-Net, 0.86B parameters; v1.5 has
  the same UNet). The 338.6 G of convs and linear layers rounds to it; the attention's
  matrix products are evidently not in that count (with them: 402 G), as usual for
  module-hook profilers. The conv and linear weights come to 859.1 M (859.5 M with biases
  and norms), the model card's 860M UNet.
"""
from __future__ import annotations

from dataclasses import replace

from lego_build.analysis.networks.builder import NetBuilder, Shape
from lego_build.analysis.networks.ddpm import (
    concat_skip,
    resnet_block,
    timestep_embedding,
    upsample,
)
from lego_build.ir.workload import Layer

LATENT: Shape = (4, 64, 64)
MODEL_CH, CH_MULT, NUM_RES_BLOCKS, ATTN_LEVELS = 320, (1, 2, 4, 4), 2, (0, 1, 2)
HEADS, CONTEXT_TOKENS, CONTEXT_DIM, FF_MULT = 8, 77, 768, 4
TEMB = 4 * MODEL_CH
RESNET_NAMES = ("norm1", "conv1", "time_emb_proj", "norm2", "conv2", "conv_shortcut")


def _conv1x1(net: NetBuilder, name: str, count: int) -> None:
    net.conv(name, net.shape[0], 1)
    net.layers[-1] = replace(net.layers[-1], count=count)


def _attention(net: NetBuilder, name: str, n_kv: int, k_in: int, count: int) -> None:
    """Q from the current tokens, K and V from ``n_kv`` tokens of width ``k_in``."""
    c, h, w = net.shape
    b, n, d = net.batch, h * w, c // HEADS
    net.matmul(f"{name}.to_q", b * n, c, c, count=count, op="fc")
    net.matmul(f"{name}.to_k", b * n_kv, c, k_in, count=count, op="fc")
    net.matmul(f"{name}.to_v", b * n_kv, c, k_in, count=count, op="fc")
    net.matmul(f"{name}.qk", n, n_kv, d, batch=b * HEADS, count=count, op="attention_qk")
    net.ppu(f"{name}.softmax", "softmax", b * HEADS * n * n_kv, count=count)
    net.matmul(f"{name}.av", n, d, n_kv, batch=b * HEADS, count=count, op="attention_av")
    net.matmul(f"{name}.to_out.0", b * n, c, c, count=count, op="fc")


def _spatial_transformer(net: NetBuilder, name: str, count: int) -> None:
    c, h, w = x = net.shape
    t, f = net.batch * h * w, FF_MULT * c
    net.ppu(f"{name}.norm", "groupnorm", count=count)
    _conv1x1(net, f"{name}.proj_in", count)
    blk = f"{name}.transformer_blocks.0"
    net.ppu(f"{blk}.norm1", "layernorm", count=count)
    _attention(net, f"{blk}.attn1", h * w, c, count)
    net.ppu(f"{blk}.attn1.add", "add", count=count)
    net.ppu(f"{blk}.norm2", "layernorm", count=count)
    _attention(net, f"{blk}.attn2", CONTEXT_TOKENS, CONTEXT_DIM, count)
    net.ppu(f"{blk}.attn2.add", "add", count=count)
    net.ppu(f"{blk}.norm3", "layernorm", count=count)
    net.matmul(f"{blk}.ff.net.0.proj", t, 2 * f, c, count=count, op="fc")  # GEGLU: value and gate halves
    net.ppu(f"{blk}.ff.net.0.gelu", "gelu", t * f, count=count)
    net.ppu(f"{blk}.ff.net.0.mul", "mul", t * f, count=count)
    net.matmul(f"{blk}.ff.net.2", t, c, f, count=count, op="fc")
    net.ppu(f"{blk}.ff.add", "add", count=count)
    _conv1x1(net, f"{name}.proj_out", count)
    net.ppu(f"{name}.add", "add", count=count)
    net.shape = x


def sd_unet(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("stable_diffusion", batch, bits, LATENT)
    timestep_embedding(net, "time_embedding", MODEL_CH, TEMB)
    skips = [net.conv("conv_in", MODEL_CH, 3, pad=1)]
    levels = len(CH_MULT)
    for i, mult in enumerate(CH_MULT):
        for j in range(NUM_RES_BLOCKS):
            resnet_block(net, f"down_blocks.{i}.resnets.{j}", MODEL_CH * mult, TEMB, names=RESNET_NAMES)
            if i in ATTN_LEVELS and j == 0:
                _spatial_transformer(net, f"down_blocks.{i}.attentions.*", NUM_RES_BLOCKS)
            skips.append(net.shape)
        if i != levels - 1:
            skips.append(net.conv(f"down_blocks.{i}.downsamplers.0.conv", net.shape[0], 3, stride=2, pad=1))
    resnet_block(net, "mid_block.resnets.0", net.shape[0], TEMB, names=RESNET_NAMES)
    _spatial_transformer(net, "mid_block.attentions.0", 1)
    resnet_block(net, "mid_block.resnets.1", net.shape[0], TEMB, names=RESNET_NAMES)
    for k, i in enumerate(reversed(range(levels))):
        for j in range(NUM_RES_BLOCKS + 1):
            x = concat_skip(net, skips.pop())
            resnet_block(net, f"up_blocks.{k}.resnets.{j}", MODEL_CH * CH_MULT[i], TEMB, x=x, names=RESNET_NAMES)
            if i in ATTN_LEVELS and j == 0:
                _spatial_transformer(net, f"up_blocks.{k}.attentions.*", NUM_RES_BLOCKS + 1)
        if i != 0:
            upsample(net, f"up_blocks.{k}.upsamplers.0.upsample")
            net.conv(f"up_blocks.{k}.upsamplers.0.conv", net.shape[0], 3, pad=1)
    assert not skips
    net.ppu("conv_norm_out", "groupnorm")
    net.ppu("conv_act", "silu")
    net.conv("conv_out", LATENT[0], 3, pad=1)
    return tuple(net.layers)
